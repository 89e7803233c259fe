"""Everything built on the host: Debian packages, the kernel (source tree,
config, make, cache), the initramfs (manifest, cpio) and disk images."""
