"""Text from trials made safe to show: no control character reaches a page or a terminal.

Trial output (an agent's transcript, a script's stdout, a verifier's log) may hold
terminal escapes (ESC ``[2J``), bells and other C0/C1 controls. In an HTML page or a
Markdown file they are invisible to the reader but act when the file is ``cat`` to a
terminal, and some viewers drop or mangle the text around them. :func:`printable`
shows each as a visible stand-in instead: a C0 control or DEL as its Unicode control
picture (ESC as ``␛``, BEL as ``␇``), a C1 control as U+FFFD. Tab and newline stay;
a CR of a CRLF line end becomes a plain newline.
"""

from __future__ import annotations

import re

# C0 but tab and newline, DEL, and C1 (U+0080..U+009F).
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def _picture(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code < 0x20:
        return chr(0x2400 + code)
    return "\u2421" if code == 0x7F else "\ufffd"


def printable(text: str) -> str:
    """``text`` with every control character but tab and newline shown as a visible stand-in."""
    if not CONTROL.search(text):
        return text
    return CONTROL.sub(_picture, text.replace("\r\n", "\n"))
