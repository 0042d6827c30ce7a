"""shared.data.images.load_images: each layout and normalisation on real prepared files (write_safetensors), against
the arithmetic the papers' own loaders did; split_by_class; the template's prepared file carries the digest."""
import numpy as np
import pytest
import torch

from shared.data import read_prepared, split_by_class, write_safetensors
from shared.data.images import load_images

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def prepared(tmp_path, shape, dtype=np.uint8):
    rng = np.random.default_rng(0)
    make = (lambda n: rng.integers(0, 256, (n, *shape), dtype=np.uint8)) if dtype == np.uint8 else (
        lambda n: rng.random((n, *shape), dtype=np.float32))
    arrays = {"x_train": make(6), "y_train": rng.integers(0, 10, 6), "x_test": make(4), "y_test": rng.integers(0, 10, 4)}
    path = tmp_path / "data.safetensors"
    write_safetensors(arrays, path, {"dataset": "fake"})
    return path, arrays


def test_colour_layouts_and_per_channel_normalisation(tmp_path):
    path, arrays = prepared(tmp_path, (4, 4, 3))
    x = torch.from_numpy(arrays["x_train"]).float() / 255.0  # (N, H, W, C)
    chw = x.permute(0, 3, 1, 2)
    assert torch.equal(load_images(path, "chw")["x_train"], chw)
    assert torch.equal(load_images(path, "flat")["x_train"], chw.reshape(6, -1))
    assert torch.equal(load_images(path, "hwc_flat")["x_train"], x.reshape(6, -1))
    normalised = load_images(path, "chw", "per_channel", MEAN, STD)["x_train"]
    assert torch.equal(normalised, (chw - torch.tensor(MEAN)[:, None, None]) / torch.tensor(STD)[:, None, None])
    assert normalised.is_contiguous()
    data = load_images(path)
    assert data["y_train"].dtype == torch.int64 and torch.equal(data["y_test"], torch.from_numpy(arrays["y_test"]))


def test_greyscale_and_flat_float_rows(tmp_path):
    path, arrays = prepared(tmp_path, (5, 5))
    x = torch.from_numpy(arrays["x_test"]).float() / 255.0
    assert torch.equal(load_images(path, "chw")["x_test"], x[:, None])
    centred = load_images(path, "flat", "centre")
    flat = x.reshape(4, -1)
    mean = (torch.from_numpy(arrays["x_train"]).float() / 255.0).reshape(6, -1).mean(0)
    assert torch.equal(centred["x_test"], flat - mean)
    digits, arrays = prepared(tmp_path, (16,), np.float32)  # floats are kept (no / 255), square rows become images
    assert torch.equal(load_images(digits, "chw")["x_train"], torch.from_numpy(arrays["x_train"]).view(6, 1, 4, 4))


def test_bad_layout_or_normalisation_is_named(tmp_path):
    path, _ = prepared(tmp_path, (4, 4, 3))
    with pytest.raises(ValueError, match="layout 'nhwc'"):
        load_images(path, "nhwc")
    with pytest.raises(ValueError, match="per_channel"):
        load_images(path, "flat", "per_channel", MEAN, STD)


def test_split_by_class_takes_the_last_fraction_of_each_class():
    y = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    split = split_by_class(np.arange(8), y, 0.25)
    assert split["x_test"].tolist() == [6, 7] and split["x_train"].tolist() == [0, 2, 4, 1, 3, 5]


def test_template_prepare_data_writes_the_digest(tmp_path, monkeypatch):
    from shared.templates.paper import prepare_data
    out = tmp_path / "digits.safetensors"
    monkeypatch.setattr("sys.argv", ["prepare_data", "--params", '{"dataset": "digits", "test_fraction": 0.2}',
                                     "--out", str(out)])
    prepare_data.main()
    assert b"content_sha256" in out.read_bytes()[:4096]
    arrays, meta = read_prepared(out)  # checks the digest
    assert meta["dataset"] == "digits" and arrays["x_train"].shape[1] == 64


def test_registry_image_facts_and_the_mismatch_message_naming_the_key():
    from shared.data.registry import image_facts, shape_mismatch
    assert image_facts("cifar10") == {"image_shape": [3, 32, 32], "in_channels": 3, "size": 32, "d_input": 3072,
                                      "n_classes": 10, "n_train": 50_000}
    assert image_facts("mnist_5k")["image_shape"] == [1, 28, 28] and image_facts("mnist_5k")["n_train"] == 4000
    assert shape_mismatch("mnist", {"d_input": 784, "n_classes": 10}) is None
    assert shape_mismatch("mnist", {"d_input": 784, "image.in_channels": 3}) == (
        "'image.in_channels': 3 does not match dataset 'mnist' (allowed: 1)")
    with pytest.raises(ValueError, match="'nations' holds triples"):
        image_facts("nations")
