"""Writes an export document (gen-dataset's year) as a Python aw-server
database, with aw-core's own peewee storage, for scripts/bench-legacy.

    python benches/legacy_db.py DOCUMENT.json OUT.db
"""

import json
import sys

from aw_core.models import Event
from aw_datastore.storages.peewee import PeeweeStorage


def main(document_path: str, out: str) -> None:
    with open(document_path, encoding="utf-8") as file:
        document = json.load(file)
    storage = PeeweeStorage(testing=False, filepath=out)
    total = 0
    for bucket_id, bucket in document["buckets"].items():
        storage.create_bucket(
            bucket_id,
            bucket["type"],
            bucket["client"],
            bucket["hostname"],
            created=bucket.get("created") or "2025-01-01T00:00:00+00:00",
            data=bucket.get("data") or {},
        )
        events = [
            Event(timestamp=event["timestamp"], duration=event["duration"], data=event["data"])
            for event in bucket["events"]
        ]
        storage.insert_many(bucket_id, events)
        total += len(events)
        print(f"{bucket_id}: {len(events)} events", file=sys.stderr)
    storage.db.close()
    print(f"{total} events in {out}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
