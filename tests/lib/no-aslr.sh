#!/usr/bin/env bash
# no-aslr.sh CMD ARGS... -- run CMD without address-space randomisation (setarch -R), which
# it and every program it starts inherit. ThreadSanitizer maps its shadow memory at fixed
# addresses; with the kernel's mmap randomisation at more bits than its runtime expects
# (vm.mmap_rnd_bits > 28) a library can land there first and TSan aborts at start with
# "unexpected memory mapping". Turning randomisation off for the tests alone needs no root
# and leaves the host's setting as it is. Without setarch, CMD runs as it is.
if command -v setarch >/dev/null 2>&1; then
    exec setarch "$(uname -m)" -R "$@"
fi
exec "$@"
