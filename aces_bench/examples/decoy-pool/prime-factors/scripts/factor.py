#!/usr/bin/env python3
"""Factorise integers into primes, flag primes, and compute the GCD and LCM of the whole list.

Usage: python3 scripts/factor.py <numbers.txt>

Standard library only.
"""

import math, sys

def factor(n):
    out, d = [], 2
    while d * d <= n:
        while n % d == 0:
            out.append(d); n //= d
        d += 1 if d == 2 else 2
    if n > 1:
        out.append(n)
    return out

if len(sys.argv) != 2:
    sys.exit("usage: factor.py <numbers.txt>")
nums = [int(t) for t in open(sys.argv[1], encoding="utf-8").read().split() if t.isdigit() and int(t) > 1]
for n in nums:
    f = factor(n)
    print(f"{n} = {' x '.join(map(str, f))}" + ("  (prime)" if len(f) == 1 else ""))
if nums:
    print(f"gcd = {math.gcd(*nums)}, lcm = {math.lcm(*nums)}")
