"""Firmware images read without root and without mounting.

    unpack_image(path, dest) -> the root directory of the image's files
    image_format(path)       -> "tar", "cpio", "ext", "squashfs" (compressed
                                ones as "tar.gz", "cpio.xz", ...) or None

Shared by the static and runtime audit (sandbox/audit/inputs.py) and the
whole-system rehearsal. See sandbox/images/unpack.py.
"""
from sandbox.images.limits import ImageLimits
from sandbox.images.unpack import image_format, unpack_image

__all__ = ["ImageLimits", "image_format", "unpack_image"]
