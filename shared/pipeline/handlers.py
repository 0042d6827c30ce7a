"""What the Snakefile's onsuccess and onerror handlers do at the end of a run."""
import threading
from pathlib import Path

from shared.pipeline.job import show_log_tail


def show_failed_data_logs(run_started):
    """The log of each data job of this run whose dataset is still missing: that job failed."""
    for log in sorted(Path("logs/data").glob("*.log")):
        if log.stat().st_mtime >= run_started and not Path(f"data/prepared/{log.stem}.safetensors").exists():
            show_log_tail(log, 40)


def cancel_pending_reselection():
    """Cancel Snakemake's job re-selection timers still pending (profiles/default: one each 10 s per selection round
    that found jobs waiting): each would hold the process open until it fires. The jobs are done or failed; nothing
    is left to select."""
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()
