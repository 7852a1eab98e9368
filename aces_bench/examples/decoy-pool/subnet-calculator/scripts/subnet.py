#!/usr/bin/env python3
"""Calculate IPv4/IPv6 subnet details from CIDR notation: network, broadcast, netmask, usable host range and count.

Usage: python3 scripts/subnet.py <networks.txt>

Standard library only.
"""

import ipaddress, sys

if len(sys.argv) != 2:
    sys.exit("usage: subnet.py <networks.txt>  (one CIDR per line, optionally followed by an address to test)")
for line in open(sys.argv[1], encoding="utf-8"):
    parts = line.split()
    if not parts:
        continue
    try:
        net = ipaddress.ip_network(parts[0], strict=False)
    except ValueError as exc:
        print(f"{parts[0]}: {exc}")
        continue
    hosts = net.num_addresses - (2 if net.version == 4 and net.prefixlen < 31 else 0)
    first = net.network_address + (1 if hosts != net.num_addresses else 0)
    last = net.broadcast_address - (1 if hosts != net.num_addresses else 0)
    print(f"{parts[0]}: network {net.network_address}/{net.prefixlen} netmask {net.netmask} "
          f"broadcast {net.broadcast_address} hosts {hosts} ({first} - {last})")
    for addr in parts[1:]:
        print(f"  {addr} {'is' if ipaddress.ip_address(addr) in net else 'is not'} in {net}")
