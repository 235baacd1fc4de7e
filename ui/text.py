"""User text shown as text: the one escape between the data and Streamlit's Markdown.

Streamlit renders its strings as Markdown — with LaTeX (``$x$``), colour and icon
directives (``:red[…]``, ``:material/home:``), links, images and bold — in ``st.markdown``,
``st.caption``, ``st.error`` / ``warning`` / ``info`` / ``success``, ``st.toast``, spinner
and progress texts, expander, tab and popover labels, every widget's label and help,
``st.metric`` and the option labels of ``st.radio``, ``st.select_slider``, ``st.pills`` and
``st.segmented_control`` (Streamlit 1.67; ``st.selectbox`` / ``st.multiselect`` options,
``st.text``, ``st.code`` and ``st.dataframe`` show text as it is). A file name, a column
name, a category or a cell written into one of them would be interpreted: a cell
``![t](http://host/x.png)`` makes every viewer's browser fetch that URL, and bold text,
LaTeX and links can imitate the app's own messages.

:func:`literal` turns any such value into the Markdown that shows exactly its characters.
Every page and widget passes user-provided text (names from the file, messages from
``core`` that quote them) through it; ``tests/test_injection.py`` reads the sources and
fails on an interpolated user value that does not.
"""

from __future__ import annotations

import re

__all__ = ["literal", "quoted", "shown"]

#: Every ASCII punctuation character: CommonMark lets a backslash escape each of them, and
#: escaped, none starts Markdown, a LaTeX formula ($), a directive (:), HTML (<, &) or a link.
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
#: Line breaks and tabs become spaces: a name is shown on one line (no heading, list or
#: code block can start on a line of its own).
_SPACES = str.maketrans({"\r": " ", "\n": " ", "\t": " ", "\v": " ", "\f": " ", "\x85": " ", "\u2028": " ",
                         "\u2029": " "})
#: Where GitHub-flavoured Markdown turns plain text into a link (``http://…``, ``www.…``,
#: ``name@host.org``): it finds them in the parsed text, after the escapes, so a backslash
#: does not stop it. An invisible WORD JOINER (U+2060) at these places does.
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?i:(?<=www)(?=\.))|(?=@)")
_JOINER = "\u2060"


def literal(value) -> str:
    """The Markdown that shows ``str(value)`` character for character.

    Every ASCII punctuation character gets a backslash (CommonMark's escape: ``\\*`` shows
    ``*``), so no emphasis, link, image, HTML tag or entity, LaTeX formula, directive,
    heading or list survives; line breaks become spaces; an invisible word joiner (U+2060)
    goes inside ``://``, before the dot of ``www.`` and before ``@``, where GitHub-flavoured
    Markdown would turn a bare address into a link. Letters, digits, spaces and non-ASCII
    characters are kept as they are.

    Parameters
    ----------
    value : object
        A file, column or category name, a cell, or a message quoting them.

    Returns
    -------
    str
        For example ``literal("**a** $x$")`` is ``"\\*\\*a\\*\\* \\$x\\$"``, shown as
        ``**a** $x$``.
    """
    text = _AUTOLINK.sub(_JOINER, str(value).translate(_SPACES))
    return "".join("\\" + ch if ch in _PUNCTUATION else ch for ch in text)


def shown(markdown: str) -> str:
    """The characters a :func:`literal` string shows (its inverse, up to line breaks): the
    backslashes and word joiners removed. For reading an element's text back (tests)."""
    return _ESCAPED.sub(r"\1", markdown).replace(_JOINER, "")


_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def quoted(value) -> str:
    """:func:`literal` of ``repr(value)``: a name in quotes, as ``f"{name!r}"`` prints it."""
    return literal(repr(value))
