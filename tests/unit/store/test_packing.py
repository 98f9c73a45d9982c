"""Packed item bodies: every text round-trips, the dictionaries never change, a step packs small."""

from __future__ import annotations

import hashlib
import json

import pytest

from signoff.errors import UsageError
from signoff.store import packing
from signoff.store.codec import COMPRESS_AT, Codec
from signoff.store.session_records import LogChunk

# A dictionary's digest, fixed once items were written with it: a changed
# dictionary would make every item packed with it unreadable. Add a new number.
DIGESTS = {1: "f1de43b42351f00bf45d3c0ee7cc034be83b1b7168c2a6e79667885592dd2322"}


def test_every_dictionary_is_the_one_items_were_written_with() -> None:
    digests = {n: hashlib.sha256(d).hexdigest() for n, d in packing.DICTIONARIES.items()}

    assert digests == DIGESTS


@pytest.mark.parametrize(
    "body",
    [
        "",
        "{}",
        '{"session_id":"s1","seq":3,"events":[]}',
        "é — 漢字 \x00 \U0001f600" * 50,
        json.dumps({"blob": "x" * 100_000, "n": list(range(500))}),
    ],
)
def test_any_text_packs_and_unpacks_unchanged(body: str) -> None:
    packed = packing.pack(body)

    assert packed[0] == 1
    assert packing.unpack(packed) == body


def test_a_packed_body_of_an_unknown_dictionary_or_a_broken_stream_is_refused() -> None:
    packed = packing.pack('{"a": 1}' * 40)

    with pytest.raises(UsageError, match="dictionary 07"):
        packing.unpack(b"\x07" + packed[1:])
    with pytest.raises(UsageError, match="nothing"):
        packing.unpack(b"")
    with pytest.raises(UsageError, match="does not unpack"):
        packing.unpack(packed[: len(packed) // 2])


def test_a_steps_log_chunk_is_stored_in_a_third_of_its_json() -> None:
    result = '{"id":8,"status":"ok","value":16}'
    chunk = LogChunk.model_validate(
        {
            "session_id": "01M8WGFPW1EVYS0RRAQKMGRN6G",
            "seq": 1796253145997,
            "run_id": "01M8WGFPWM06YNS86PZW1J1XJP",
            "messages": [
                {"role": "tool", "call_id": "c8", "name": "lookup", "content": result},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": "c9", "name": "lookup", "args": {"i": 9}}],
                },
            ],
            "events": [
                {
                    "type": "tool:result",
                    "id": "c8",
                    "tool": "lookup",
                    "args": {"i": 8},
                    "detailText": result,
                    "statusText": "Approved.",
                },
                {"type": "actauth:decision", "tool": "lookup", "decision": "allow", "reason": ""},
                {"type": "tool:started", "id": "c9", "tool": "lookup", "args": {"i": 9}},
            ],
            "at": 1796253146.053365,
            "expires_at": 1798845145.988586,
        }
    )
    item = Codec(None).encode(chunk)
    plain = len(chunk.model_dump_json())

    assert "body" not in item
    assert len(item["zbody"]) * 3 <= plain
    assert Codec(None).decode(item, LogChunk) == chunk


def test_a_short_body_is_stored_as_it_is() -> None:
    chunk = LogChunk(session_id="s", seq=1, run_id="r", at=1.0)
    item = Codec(None).encode(chunk)

    assert len(chunk.model_dump_json()) <= COMPRESS_AT
    assert json.loads(item["body"])["seq"] == 1
    assert "zbody" not in item
