"""The XML parser strangers' SOAP goes through refuses what could hurt braid."""

from __future__ import annotations

import pytest

from braid.adapters.nsi.safe_xml import MAX_BYTES, MAX_DEPTH, UnsafeXmlError, parse_xml


def test_plain_xml_parses() -> None:
    assert parse_xml(b"<a><b>x</b></a>").findtext("b") == "x"


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b'<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>', "document type"),
        (b'<!doctype a SYSTEM "http://127.0.0.1:1/x.dtd"><a/>', "document type"),
        (b'<a xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="/etc/passwd"/></a>', ""),
        (b"<a>" * (MAX_DEPTH + 1) + b"</a>" * (MAX_DEPTH + 1), "deeper"),
        (b"<a>" + b"x" * MAX_BYTES + b"</a>", "bytes"),
        (b"<a>&undefined;</a>", "not well-formed"),
    ],
)
def test_dangerous_or_broken_documents_are_refused(data: bytes, says: str) -> None:
    if not says:  # XInclude is never processed: the element stays as it is
        root = parse_xml(data)
        assert len(root) == 1 and root[0].text is None
        return
    with pytest.raises(UnsafeXmlError) as raised:
        parse_xml(data)
    assert says in str(raised.value)
