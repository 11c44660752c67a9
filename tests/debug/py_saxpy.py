"""A Python program whose kernel runs through the kemu package, for
`kemu debug python` (tests/debug/run.sh)."""
import os
import sys

import numpy as np

import kemu

dev = kemu.Device()
mod = dev.load_ptx_file(os.path.join(os.path.dirname(os.path.abspath(__file__)), "dbg.ptx"))
x = np.arange(64, dtype=np.float32)
y = np.ones(64, dtype=np.float32)
mod.kernel("saxpy")(np.int32(64), np.float32(2), kemu.In(x), kemu.InOut(y), grid=1, block=64)
ok = np.array_equal(y, 2 * x + 2)
print("py_saxpy:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
