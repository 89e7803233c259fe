"""One QEMU guest: the command line, the process, the accelerator choice, the
agent protocol, the deadline, the kernel-log patterns, and the target (kernel,
initramfs and accelerator) a boot needs."""
