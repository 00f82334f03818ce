"""Placeholder: the libdevice library is being written."""
