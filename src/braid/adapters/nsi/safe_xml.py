"""Parsing XML from strangers: no DTD, no entities, no network, bounded size and depth.

lxml's parser is told never to load a DTD, resolve an entity or touch the
network; on top of that any document type declaration is refused before
parsing (XXE and entity-expansion "billion laughs" payloads both need one),
as is a document over `MAX_BYTES` or nested deeper than `MAX_DEPTH`.
"""

from __future__ import annotations

from typing import Final

from lxml import etree

__all__ = ["MAX_BYTES", "MAX_DEPTH", "UnsafeXmlError", "parse_xml"]

MAX_BYTES: Final = 256 * 1024
MAX_DEPTH: Final = 40


class UnsafeXmlError(ValueError):
    """Not well-formed, or refused: a DTD, entities, too large or too deep."""


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )


def parse_xml(data: bytes) -> etree._Element:
    """The root element of `data`; UnsafeXmlError says what is wrong with it."""
    if len(data) > MAX_BYTES:
        raise UnsafeXmlError(f"the document is over {MAX_BYTES} bytes")
    if b"<!DOCTYPE" in data.upper() or b"<!ENTITY" in data.upper():
        raise UnsafeXmlError("document type declarations and entities are not accepted")
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        raise UnsafeXmlError(f"not well-formed XML: {exc}") from exc
    if root.getroottree().docinfo.internalDTD is not None:
        raise UnsafeXmlError("document type declarations are not accepted")
    if _depth(root) > MAX_DEPTH:
        raise UnsafeXmlError(f"the document nests deeper than {MAX_DEPTH} elements")
    return root


def _depth(root: etree._Element) -> int:
    deepest = 0
    for element in root.iter():
        depth = sum(1 for _ in element.iterancestors())
        deepest = max(deepest, depth + 1)
    return deepest
