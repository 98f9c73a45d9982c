"""An item's body, compressed: raw deflate against a preset dictionary of the records' JSON.

A step writes its session and its log chunk, a few hundred bytes of JSON each
whose field names and event shapes are the same in every step. Plain zlib finds
little to reuse in so few bytes; deflate primed with a dictionary of those
shapes (zlib's ``zdict``) writes each repeat as a back-reference, so a step's
two bodies take a third of their JSON. The dictionary is only a starting
point: any text packs and unpacks unchanged, whatever it holds.

A packed body is one byte naming the dictionary, then the deflate stream. A
dictionary, once items are written with it, never changes: a different one
gets the next number, and ``unpack`` keeps reading every number it has known.
"""

from __future__ import annotations

import zlib
from typing import Final

from signoff.errors import UsageError

__all__ = ["DICTIONARIES", "pack", "unpack"]

# The shapes a step's session and log chunk repeat, and a pending item's and an
# outbox row's fields; deflate reaches back 32 KB, so all of it is in reach, and
# what is nearest the end is cheapest to refer to.
_FIRST: Final = (
    b'{"pending_id":"","channel":"","run_id":"","kind":"approval","created_at":,'
    b'"notification":null,"retain_until":null,"notified_at":null,"attempts":0,'
    b'"failed":false,"last_error":null,"failures":0,"retry_at":null,"receipt":{}}'
    b'{"id":"","kind":"approval","session_id":"","run_id":"","agent":"","tenant":"",'
    b'"environment":"","call_id":"","tool":"","args":{},"scope":null,"reason":"",'
    b'"question":null,"options":null,"summary":"","request":null,"said":null,'
    b'"channels":[],"requested_at":,"policy":null,"votes":[],"vote_count":0}'
    b'{"type":"loop:done","text":""}{"type":"assistant:text","text":""}'
    b'{"type":"approval:pending","id":"","tool":"","args":{},"scope":"","reason":""}'
    b'"role":"user","content":""'
    b'"messages":[{"role":"tool","call_id":"","name":"","content":"","is_error":false}'
    b',{"role":"assistant","content":"","tool_calls":[{"id":"","name":"","args":{'
    b'"events":[{"type":"budget:check","action":"ok","usedTokens":,"budgetTokens":,"ratio":0.'
    b'{"type":"toollane:result","name":"","summary":"ok: '
    b'{"type":"tool:result","id":"","tool":"","args":{},"detailText":"","statusText":"Approved."}'
    b'{"type":"actauth:decision","tool":"","decision":"allow","reason":"no rule matched'
    b' \xe2\x80\x94 default"}{"type":"tool:started","id":"","tool":"","args":{},"detailText":"'
    b'"at":,"expires_at":'
    b'"batch":[{"call":{"id":"","name":"","args":{}},"status":"allowed","decision":"allow",'
    b'"reason":"","decided_by":null,"human_denied":false,"original_args":null,"answer":null,'
    b'"status_text":null,"content":null,"is_error":false}],"pending_id":null,'
    b'"awaiting_call":null},"first_seq":,"next_seq":,"run_start_seq":,"event_count":,'
    b'"message_count":,"text":null,"stop_reason":null,"gated_day":"20'
    b'{"session_id":"","agent":"","tenant":"","environment":"","state":{"version":1,'
    b'"agent":"","tenant":"","environment":"","session_id":"","run_id":"","channel":null,'
    b'"model_calls":,"window_start":0,"omitted":0,"task_at":0,"prompt_tokens":,'
    b'"prompt_tokens_at":,"last_text":"","corrections":0,"cut_calls":0,'
    b'{"session_id":"","seq":,"run_id":"",'
)

# number -> dictionary; tests/unit/store/test_packing.py holds each one's digest
DICTIONARIES: Final[dict[int, bytes]] = {1: _FIRST}
_CURRENT: Final = 1
# zlib's default level: 9 saves under 1 % more here, at twice the time
_LEVEL: Final = 6
# negative window bits: raw deflate, without zlib's 6 bytes of header and checksum
_RAW: Final = -15


def pack(body: str) -> bytes:
    """``body`` compressed with the current dictionary, its number first."""
    packer = zlib.compressobj(_LEVEL, zlib.DEFLATED, _RAW, zdict=DICTIONARIES[_CURRENT])
    return bytes((_CURRENT,)) + packer.compress(body.encode()) + packer.flush()


def unpack(data: bytes) -> str:
    """The body ``pack`` compressed, with whichever dictionary it names.

    Raises:
        UsageError: the first byte names no dictionary this release knows (an item
            written by a newer one), or the stream is not deflate.
    """
    dictionary = DICTIONARIES.get(data[0]) if data else None
    if dictionary is None:
        raise UsageError(
            f"a packed body names dictionary {data[:1].hex() or 'nothing'}: "
            "written by a newer release?"
        )
    try:
        unpacker = zlib.decompressobj(_RAW, zdict=dictionary)
        body = unpacker.decompress(data[1:]) + unpacker.flush()
        if not unpacker.eof:
            raise zlib.error("the stream ends early")
        return body.decode()
    except (zlib.error, UnicodeDecodeError) as error:
        raise UsageError(f"a packed body does not unpack: {error}") from error
