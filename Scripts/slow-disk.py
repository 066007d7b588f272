#!/usr/bin/env python3
"""Runs a command with a slow disk mounted for it, then takes the disk down again.

The disk is bench.py's --slow-disk (SlowDisk there): ext4 on a loop device over a sparse file,
whose writes the cgroup v1 blkio throttle caps at MIB_S MiB/s, page-cache writeback and the
fdatasync that waits for it included. The command runs with $SLOW_DISK set to the mounted folder
(and in it, unless --keep-cwd); the disk goes on any exit, Ctrl-C included. Needs root.

  sudo python3 Scripts/slow-disk.py 100 -- sh -c 'haul -o "$SLOW_DISK/f.bin" URL'
  sudo python3 Scripts/slow-disk.py 50 -- dd if=/dev/zero of=x bs=4M count=256 oflag=direct conv=fdatasync
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (beside this script)


def main() -> int:
    """Makes the disk, runs the command on it, takes the disk down; the command's exit status."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mib_s", type=bench.ranged(1, 100000), metavar="MIB_S", help="the disk's write cap, MiB/s")
    p.add_argument("--size-mib", type=bench.ranged(64, 1 << 24), default=4096, help="the disk's size (default 4096)")
    p.add_argument("--work-dir", default="", help="where the image goes (default: a new temp folder)")
    p.add_argument("--keep-cwd", action="store_true", help="run the command here, not in the disk's folder")
    p.usage = "%(prog)s [options] MIB_S -- COMMAND [ARGS...]"
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    cfg, command = p.parse_args(argv[:split]), argv[split + 1:]
    if not command:
        p.error("no command (give it after --)")
    if why := bench.SlowDisk.missing():
        bench.die(f"this machine cannot make a slow disk: {why}")
    work = Path(cfg.work_dir or tempfile.mkdtemp(prefix="haul-slow-disk.")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    disk = bench.SlowDisk(work, cfg.mib_s, cfg.size_mib)
    try:
        folder = disk.start()
        env = dict(os.environ, SLOW_DISK=str(folder))
        return subprocess.run(command, cwd=None if cfg.keep_cwd else folder, env=env, check=False).returncode
    finally:
        disk.stop()
        if not cfg.work_dir:
            with contextlib.suppress(OSError):  # not empty only when the teardown said what is left
                os.rmdir(work)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        bench.log("interrupted")
        sys.exit(130)
