"""A warm Python for single-threaded pipeline jobs: a fork server with torch, numpy and matplotlib imported, so that
a tiny job starts in milliseconds instead of paying 1-3 CPU-s of imports. A server of another kind, "snakemake", has
Snakemake imported instead: the test suite's Snakemake runs (shared.pipeline.scratch.snakemake, through `captured`)
fork from it and skip about 1 CPU-s of imports each.

shared.pipeline.job hands a `python -m <module> ARGS` job to `start(command, log_file)`, which starts a server where
none answers, and returns None where the job must run cold (then job.py starts it as before). A server serves one
interpreter and one environment (the socket's name is their hash, which the server checks against its own before it
serves) and any working directory: each job runs in its client's, with that directory first on sys.path as
`python -m` puts it, so the scratch copies of the test suite share one server instead of importing torch each. It
exits after IDLE_S without a request, and refuses (the job then runs cold) and exits once a module file it imported
has changed on disk.

Each job is forked from the server before any torch op has run (no thread pool exists yet), with no module of
shared/ or replications/ loaded, fresh seeds for numpy's and Python's global generators, the job's own stdin,
stdout and stderr, and default signal handlers: what it computes is what a cold start computes.

    python -m shared.pipeline.worker SOCKET [KIND]     (started by `start`, not by hand; KIND: jobs or snakemake)
"""
import atexit
import fcntl
import hashlib
import io
import json
import os
import random
import runpy
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import types
from pathlib import Path

IDLE_S = float(os.environ.get("REPLICATE_WORKER_IDLE_S", 30))
PROJECT_PACKAGES = ("shared", "replications")


# Variables sent with each job, not part of the key: a shell's record of the working directory, and pytest's name of
# the running test, which changes with every test (in the key, each test of the suite would start servers of its own)
PER_JOB = ("PWD", "OLDPWD", "PYTEST_CURRENT_TEST")


def key(env=None, kind="jobs"):
    """What a warm job must share with a cold one: interpreter and environment (the working directory travels with
    each job); and what the server imported, its kind."""
    env = os.environ if env is None else env
    text = json.dumps([sys.executable, sorted((k, v) for k, v in env.items() if k not in PER_JOB), kind])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def socket_path(env=None, kind="jobs"):
    """The server's socket, in a folder only this user can enter; None where the folder is not such a one."""
    folder = Path(tempfile.gettempdir()) / f"replicate-worker-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    st = folder.lstat()
    if not folder.is_dir() or folder.is_symlink() or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return folder / f"{key(env, kind)}.sock"


def eligible(command, env=None, kind="jobs"):
    """A `python -m module` command of this interpreter, on a machine that can fork and pass file descriptors, not on
    a cluster node, not opted out; a job (kind "jobs") single-threaded too (OMP_NUM_THREADS=1, as Snakemake sets it
    for a one-thread job)."""
    env = os.environ if env is None else env
    return (len(command) > 2 and command[1] == "-m" and os.path.realpath(command[0]) == os.path.realpath(sys.executable)
            and (kind != "jobs" or env.get("OMP_NUM_THREADS") == "1") and env.get("REPLICATE_WORKER", "1") != "0"
            and "SLURM_JOB_ID" not in env and hasattr(os, "fork") and hasattr(socket, "send_fds"))


class WarmJob:
    """A job running in a fork of the server: wait(timeout) -> exit status (TimeoutExpired while it runs),
    send_signal(signum), and cpu_s, the CPU seconds of the job's process tree, once it has ended."""

    def __init__(self, conn, pid, buffered):
        self.conn, self.pid, self.buffered, self.cpu_s = conn, pid, buffered, None

    def send_signal(self, signum):
        try:
            os.kill(self.pid, signum)
        except ProcessLookupError:
            pass

    def wait(self, timeout=None):
        if b"\n" not in self.buffered and not select.select([self.conn], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired("warm job", timeout)
        line, self.buffered = read_line(self.conn, self.buffered)
        self.conn.close()
        parts = line.split()
        if len(parts) != 3 or parts[0] != "exit":
            raise RuntimeError(f"the warm worker lost job {self.pid} (it answered {line!r})")
        self.cpu_s = float(parts[2])
        return int(parts[1])


def read_line(conn, buffered=b""):
    """(the next line from `conn`, what was read after it); a line without its newline at the end of the stream."""
    while b"\n" not in buffered:
        chunk = conn.recv(4096)
        if not chunk:
            break
        buffered += chunk
    line, _, rest = buffered.partition(b"\n")
    return line.decode(), rest


def start(command, log_file, err_file=None, cwd=None, env=None, kind="jobs"):
    """Run `command` (`python -m module ARGS`) in the warm server of `kind` with its output in `log_file` (its stderr
    in `err_file` where given), in `cwd` with the environment `env` (by default this process's): a WarmJob, or None
    when the job must run cold (not eligible, no server could start, the server refused)."""
    env = dict(os.environ if env is None else env)
    if not eligible(command, env, kind):
        return None
    path = socket_path(env, kind)
    conn = path and (connect(path) or (started(path, env, kind) and connect(path)))
    if not conn:
        return None
    try:
        files = [log_file] if err_file is None else [log_file, err_file]
        socket.send_fds(conn, [b"J"], [stdin_fd(), *(f.fileno() for f in files)])
        place = {"cwd": os.path.abspath(cwd or os.getcwd()), "env": {k: env.get(k) for k in PER_JOB}}
        conn.sendall(json.dumps({**place, "argv": command[2:]}).encode() + b"\n")
        answer, rest = read_line(conn)  # "pid N"; anything else (refused, going away) means nothing ran
    except OSError:
        answer, rest = "", b""
    parts = answer.split()
    if len(parts) == 2 and parts[0] == "pid":
        return WarmJob(conn, int(parts[1]), rest)
    conn.close()
    return None


def captured(command, cwd, env, timeout=None, kind="snakemake"):
    """subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout), run in the warm
    server of `kind`: the same CompletedProcess (or TimeoutExpired), or None when it must run cold."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        job = start(command, out, err, cwd=cwd, env=env, kind=kind)
        if job is None:
            return None
        try:
            status = job.wait(timeout)
        except (subprocess.TimeoutExpired, KeyboardInterrupt) as stop:  # subprocess.run kills the command then too
            job.send_signal(signal.SIGKILL)
            job.wait()
            if isinstance(stop, KeyboardInterrupt):
                raise
            raise subprocess.TimeoutExpired(command, timeout, decoded(out), decoded(err)) from None
        return subprocess.CompletedProcess(command, status, decoded(out), decoded(err))


def decoded(file):
    """A captured output's text, decoded as subprocess.run(text=True) decodes it: a TextIOWrapper's default encoding,
    universal newlines."""
    file.seek(0)
    text = io.TextIOWrapper(file)
    try:
        return text.read()
    finally:
        text.detach()  # the file stays open, for its `with`


def connect(path):
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
        return conn
    except OSError:
        conn.close()
        return None


def started(path, env, kind):
    """Start a server for `path` and wait while it (or another job's, for the same key) imports: True once it
    listens, False when none is starting any more. The wait costs no CPU; a cold start would import the same."""
    # from the checkout this file is in, with the environment of the key: the server checks it
    server = subprocess.Popen([sys.executable, "-m", "shared.pipeline.worker", str(path), kind], env=env,
                              cwd=Path(__file__).resolve().parents[2], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    while not path.exists():
        time.sleep(0.1)
        if server.poll() is not None and not locked(path):
            return False
    return True


def locked(path):
    """Whether a server holds the lock of `path` (from its start to its exit)."""
    with open(f"{path}.lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(lock, fcntl.LOCK_UN)
        return False


def stdin_fd():
    try:
        os.fstat(0)
        return 0
    except OSError:
        return os.open(os.devnull, os.O_RDONLY)  # a job started with its stdin closed


def module_files():
    """(path, mtime, size) of every module file loaded: a change on disk makes the warm copy stale."""
    stamps = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path:
            try:
                st = os.stat(path)
                stamps.append((path, st.st_mtime_ns, st.st_size))
            except OSError:
                stamps.append((path, None, None))  # a module without a file on disk (frozen, zipped)
    return sorted(stamps)


def preload(kind="jobs"):
    """The third-party imports that dominate a tiny job's start-up (or a Snakemake run's). Nothing is computed: no
    torch op runs here, so no OpenMP or intra-op thread pool exists when a job is forked."""
    if kind == "snakemake":
        # snakemake.cli, and what a run imports next (its report plugin, smart_open, platformdirs, yte; the
        # workflow's yaml and jsonschema): a paper's dry run takes 1.6 CPU-s cold, 0.3 forked from here
        import jsonschema  # noqa: F401
        import platformdirs  # noqa: F401
        import smart_open  # noqa: F401
        import snakemake.cli  # noqa: F401
        import snakemake.report.html_reporter  # noqa: F401
        import yaml  # noqa: F401
        import yte  # noqa: F401
        return
    import matplotlib

    matplotlib.use("Agg")  # as shared.pipeline.plots sets it
    import matplotlib.pyplot  # noqa: F401
    import numpy  # noqa: F401
    import safetensors.torch  # noqa: F401
    import scipy.optimize  # noqa: F401  (permutation matching)
    import scipy.stats  # noqa: F401  (shared.stats imports spearmanr: about 0.8 CPU-s a cold job)
    import torch  # noqa: F401
    import torch._dynamo  # noqa: F401  (a job's first torch.optim optimizer imports it: about 1.3 CPU-s a training job)
    import yaml  # noqa: F401


def serve(path, kind="jobs"):
    path = Path(path)
    lock = open(f"{path}.lock", "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another server for this key is starting or serving
    if path.stem != key(os.environ, kind):
        return  # started with another environment (or kind) than the socket's name says
    preload(kind)
    stamps = module_files()
    path.unlink(missing_ok=True)  # a socket left by a server that died
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    listener.settimeout(1.0)
    running, idle_since = set(), time.time()
    try:
        while time.time() - idle_since < IDLE_S:
            running -= reap()
            if running:
                idle_since = time.time()  # idle means no job running and no request
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            idle_since = time.time()
            conn.settimeout(None)
            with conn:
                # stdin, output, and stderr where a third is sent (else it joins the output)
                _, fds, _, _ = socket.recv_fds(conn, 1, 3)
                request = json.loads(read_line(conn)[0] or "null")
                fresh = module_files() == stamps
                if len(fds) in (2, 3) and isinstance(request, dict) and request.get("argv") and fresh:
                    if (pid := os.fork()) == 0:
                        listener.close()
                        lock.close()  # the lock says a server lives; this fork is a job's
                        supervise(conn, request, fds)
                    running.add(pid)
                else:
                    conn.sendall(b"refused\n")
                for fd in fds:
                    os.close(fd)
                if not fresh:
                    break
    finally:
        path.unlink(missing_ok=True)
        listener.close()
        lock.close()  # a new server may start while this one waits for its last jobs
        reap(block=True)
        record_cpu()


def reap(block=False):
    """The pids of ended supervisors (with `block`: of all, once ended); their CPU, and their jobs', becomes this
    process's."""
    ended = set()
    try:
        while pid := os.waitpid(-1, 0 if block else os.WNOHANG)[0]:
            ended.add(pid)
    except ChildProcessError:
        pass
    return ended


def record_cpu():
    """Append "<own CPU seconds> <its jobs' CPU seconds>" to $REPLICATE_WORKER_CPU_LOG: the jobs are not children of
    whoever measures a run (the platform benchmark), so it adds these lines."""
    if log := os.environ.get("REPLICATE_WORKER_CPU_LOG"):
        t = os.times()
        with open(log, "a") as f:
            f.write(f"{t.user + t.system:.2f} {t.children_user + t.children_system:.2f}\n")


def supervise(conn, request, fds):
    """In a fork of the server: fork the job, tell the client its pid, wait, send its exit status and CPU time."""
    pid = os.fork()
    if pid == 0:
        conn.close()
        run_job(request, fds)
    for fd in fds:
        os.close(fd)
    try:
        conn.sendall(f"pid {pid}\n".encode())
        _, status, usage = os.wait4(pid, 0)
        conn.sendall(f"exit {os.waitstatus_to_exitcode(status)} {usage.ru_utime + usage.ru_stime:.3f}\n".encode())
    finally:
        os._exit(0)


def run_job(request, fds):
    """In the job's fork: become what `python -m argv[0] argv[1:]`, started in the client's working directory, would
    be, run it, exit as it would."""
    argv = request["argv"]
    os.chdir(request["cwd"])
    sys.path[0] = os.getcwd()  # `python -m` puts its working directory first: the client's checkout, not the server's
    for name, value in request["env"].items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.dup2(fds[0], 0)
    os.dup2(fds[1], 1)
    os.dup2(fds[-1], 2)
    for fd in fds:
        os.close(fd)
    for name in [m for m in sys.modules if m.split(".")[0] in PROJECT_PACKAGES]:
        del sys.modules[name]  # the job imports the checkout's code itself, as a cold start does
    random.seed()  # a cold start seeds its global generators from the OS; a fork would copy the server's
    if "numpy.random" in sys.modules:  # numpy's too, where the server imported it (a job importing it later seeds it)
        sys.modules["numpy.random"].seed()
    # a fresh __main__ (multiprocessing aliases it as __mp_main__), run as `python -m` runs it
    sys.modules["__main__"] = sys.modules["__mp_main__"] = types.ModuleType("__main__")
    sys.argv = ["-m", *argv[1:]]
    code = 0
    try:
        runpy._run_module_as_main(argv[0])
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:  # a cold interpreter prints the traceback, then dies of SIGINT
        traceback.print_exc()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        traceback.print_exc()
        code = 1
    threading._shutdown()  # as the interpreter does at exit: wait for the job's threads, then its atexit functions
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    serve(*sys.argv[1:3])
