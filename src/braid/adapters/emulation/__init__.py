"""Mininet + Open vSwitch (userspace datapath) emulation for `braid emulate`.

Everything here touches the host: network namespaces, veths, OVS bridges,
traffic-control qdiscs and iperf3 processes. It needs root. Pure pieces
(iperf3 JSON parsing, rate scaling) are kept separate so they are testable
without any of that.
"""
