"""Executable lessons whose printed numbers come from recordings made on real machines.

Data flows one way: a snippet is run by the recorder (``runner``), what it printed is
stored per target (``store``), and the pages (``markdown_ext``) and tests
(``sybil_parser``) read those recordings. The recorder's modules use only the standard
library, so they run on a bare GPU image.
"""
