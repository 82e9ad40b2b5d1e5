"""Reading a wandb offline run's transaction log in tests (wandb writes it; no public reader exists)."""

import json
import struct
from pathlib import Path

import pandas as pd


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


def parsed_records(path: Path):
    """The records of a wandb transaction log, each decoded as wandb's protobuf ``Record``."""
    from wandb.proto import wandb_internal_pb2 as pb

    for raw in records(path):
        record = pb.Record()
        record.ParseFromString(raw)
        yield record


def _nest(target: dict, keys: list[str], value) -> None:
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    target[keys[-1]] = value


def offline_runs(wandb_dir: Path) -> dict[str, dict]:
    """display name -> run, summary, config, artifacts, exit code and folder of every offline run under wandb_dir."""
    from wandb.proto import wandb_internal_pb2 as pb

    runs = {}
    for log in sorted(wandb_dir.glob("wandb/offline-run-*/run-*.wandb")):
        run = {"summary": {}, "config": {}, "artifacts": [], "exit_code": None, "folder": log.parent}
        for raw in records(log):
            record = pb.Record()
            record.ParseFromString(raw)
            kind = record.WhichOneof("record_type")
            if kind == "run":
                run.update(name=record.run.display_name, job_type=record.run.job_type, tags=list(record.run.tags),
                           project=record.run.project)
                run["config"] = {u.key: json.loads(u.value_json) for u in record.run.config.update}
            elif kind == "summary":
                for update in record.summary.update:
                    _nest(run["summary"], list(update.nested_key) or [update.key], json.loads(update.value_json))
            elif kind == "artifact":
                a = record.artifact
                run["artifacts"].append({"type": a.type, "name": a.name, "digest": a.digest,
                                         "metadata": json.loads(a.metadata or "{}"),
                                         "files": sorted(c.path for c in a.manifest.contents)})
            elif kind == "exit":
                run["exit_code"] = record.exit.exit_code
        runs[run["name"]] = run
    return runs


def logged_table(run: dict, key: str) -> pd.DataFrame:
    entry = run["summary"][key]
    assert entry["_type"] == "table-file", entry
    table = json.loads((run["folder"] / "files" / entry["path"]).read_text())
    return pd.DataFrame(table["data"], columns=table["columns"])
