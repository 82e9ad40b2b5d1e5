"""Reading a wandb offline run's transaction log in tests (wandb writes it; no public reader exists)."""

import struct
from pathlib import Path


def records(path: Path) -> list[bytes]:
    """The records of a wandb transaction log (LevelDB log format: 32 KiB blocks, 7-byte record headers)."""
    data, block, pos, out, partial = path.read_bytes(), 32768, 7, [], b""
    assert data[:4] == b":W&B", path
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # a block's tail too short for a header is padding
            pos += block - pos % block
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        chunk, pos = data[pos + 7:pos + 7 + length], pos + 7 + length
        if kind == 0 and length == 0:
            break
        if kind == 1:
            out.append(chunk)
        elif kind == 2:
            partial = chunk
        elif kind == 3:
            partial += chunk
        elif kind == 4:
            out.append(partial + chunk)
    return out
