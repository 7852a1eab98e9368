#!/usr/bin/env python3
"""Report the duration, sample rate, channels and bit depth of WAV audio files.

Usage: python3 scripts/wavinfo.py <audio.wav>

Standard library only.
"""

import sys, wave

if len(sys.argv) != 2:
    sys.exit("usage: wavinfo.py <audio.wav>")
try:
    with wave.open(sys.argv[1], "rb") as w:
        frames, rate = w.getnframes(), w.getframerate()
        print(f"duration {frames / rate:.3f} s, {rate} Hz, {w.getnchannels()} channel(s), {8 * w.getsampwidth()}-bit, {frames} frames")
except (wave.Error, EOFError) as exc:
    sys.exit(f"error: not a PCM WAV file ({exc})")
