"""Decoding JSON from the platform so that one odd value loses no more than itself.

A number Python or PostgreSQL cannot hold is kept as the text sent, and when one element of an array nests too deeply
for the decoder, that array is read element by element: the deep element comes back as ``TooDeep`` (its text), the
others decoded. Which keys mean what is the platform module's; this one only decodes.
"""

import json
import math
import re

from reviewqueue.readers import MAX_INTEGER_DIGITS


def _number_kept_as_text(read):
    """A JSON number reader that keeps, as the text sent, a number Python or PostgreSQL cannot hold.

    That is NaN and ±Infinity (which JSON does not even allow), a float beyond
    ±1.8e308, and an integer longer than ``MAX_INTEGER_DIGITS``: the reviewer still
    sees what the agent wrote, and the hold is stored.
    """

    def number(text: str):
        if read is None or (read is int and len(text) > MAX_INTEGER_DIGITS):
            return text
        value = read(text)
        return value if read is int or math.isfinite(value) else text

    return number


DECODER = json.JSONDecoder(
    parse_int=_number_kept_as_text(int),
    parse_float=_number_kept_as_text(float),
    parse_constant=_number_kept_as_text(None),
)
_SPACE = re.compile(r"[ \t\n\r]*")
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class TooDeep(str):
    """The JSON text of one array element that nests too deeply for the decoder."""


def decode_reading_apart(text: str, array_key: str) -> object:
    """``text`` decoded; should it nest too deeply to decode whole, its top-level object is read again with its
    ``array_key`` array read element by element, too deep ones as ``TooDeep``.

    Raises ValueError for text that is not JSON, and RecursionError for one too deep outside that array.
    """
    try:
        return DECODER.decode(text)
    except RecursionError:
        return _object_read_apart(text, array_key)


def _object_read_apart(text: str, array_key: str) -> dict:
    """The top-level object, its ``array_key`` array decoded element by element (too deep ones as ``TooDeep``)."""
    found = {}
    try:
        position = _expect(text, _SPACE.match(text).end(), "{")
        while text[position] != "}":
            key, position = DECODER.raw_decode(text, position)
            position = _expect(text, position, ":")
            if key == array_key and text[position] == "[":
                found[key], position = _read_array(text, position + 1)
            else:
                found[key], position = DECODER.raw_decode(text, position)
            position = _SPACE.match(text, position).end()
            if text[position] == ",":
                position = _SPACE.match(text, position + 1).end()
    except IndexError:
        raise ValueError("the JSON text ends too early") from None
    return found


def _read_array(text: str, position: int) -> tuple[list, int]:
    elements = []
    position = _SPACE.match(text, position).end()
    while text[position] != "]":
        try:
            element, position = DECODER.raw_decode(text, position)
        except RecursionError:
            end = _end_of_container(text, position)
            element, position = TooDeep(text[position:end]), end
        elements.append(element)
        position = _SPACE.match(text, position).end()
        if text[position] == ",":
            position = _SPACE.match(text, position + 1).end()
    return elements, position + 1


def _expect(text: str, position: int, token: str) -> int:
    """The position after ``token`` (and the spaces around it) at ``position``; ValueError when it is not there."""
    position = _SPACE.match(text, position).end()
    if not text.startswith(token, position):
        raise ValueError(f"expected {token!r} at {position}")
    return _SPACE.match(text, position + 1).end()


def _end_of_container(text: str, start: int) -> int:
    """Where the array or object starting at ``start`` ends, found by counting brackets outside strings."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text, start):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
        elif bracket in "]}":
            depth -= 1
            if depth == 0:
                return match.end()
    raise ValueError("an array or object that never ends")
