#!/usr/bin/env python3
"""A model, not a measurement: the time of a staged pageable host->device tidal_copy as a
pipeline of pieces (host threads fill piece i while the DMA of piece i-1 runs), before and
after the change to CopyEngine::staging_pieces. Rates from the H200 run in
../2026-11-30-h200-copies-and-pools/copy-bandwidth.json (pinned DMA 55.3 GB/s; 16-thread host
memcpy 34-48 GB/s; a fill into the warm pinned ring may well run faster, hence 60); `handoff`
is a guess of the cost of waking the host threads and issuing one DMA per piece (not
measured). Prints the predicted ratio to min(DMA rate, fill rate) for the old 16 MiB chunks,
the doubling ramp tried first, and the equal pieces committed."""

import math

MiB = 1 << 20


def pieces_old(size, chunk=16 * MiB):
    return [min(chunk, size - o) for o in range(0, size, chunk)]


def pieces_doubling(size, chunk=16 * MiB, first=2 * MiB):
    """Tried first and dropped: 2-4-8-16 ... 16-8-4-2 MiB."""
    head, tail, left, piece = [], [], size, min(first, chunk)
    while left:
        for end in (head, tail):
            n = min(piece, left)
            end.append(n)
            left -= n
            if not left:
                break
        piece = min(chunk, piece * 2)
    return head + tail[::-1]


def pieces_new(size, chunk=16 * MiB, overhead=20e-6, rate=50e9):
    """CopyEngine::staging_pieces: equal pieces of about sqrt(size x overhead x rate)."""
    piece = min(chunk, max(min(MiB, chunk), int(math.sqrt(size * overhead * rate))))
    count = -(-size // piece)
    each = min(chunk, (-(-size // count) + 4095) // 4096 * 4096)
    out, left = [], size
    while left:
        out.append(min(each, left))
        left -= out[-1]
    return out


def seconds(pieces, fill, dma, handoff):
    fill_done = dma_done = 0.0
    for n in pieces:
        fill_done += n / fill + handoff       # host threads fill the slot (serially)
        dma_done = max(dma_done, fill_done) + n / dma
    return dma_done


for fill in (34e9, 48e9, 60e9):
    for handoff in (10e-6, 30e-6):
        print(f"fill {fill / 1e9:.0f} GB/s, DMA 55.3 GB/s, {handoff * 1e6:.0f} us per piece")
        for mib in (16, 32, 64, 128, 256, 1024):
            size = mib * MiB
            bound = size / min(fill, 55.3e9)
            r = [bound / seconds(f(size), fill, 55.3e9, handoff) for f in (pieces_old, pieces_doubling, pieces_new)]
            print(f"  {mib:5d} MiB  16 MiB chunks {r[0]:.2f}x  doubling {r[1]:.2f}x  equal pieces {r[2]:.2f}x"
                  f" ({len(pieces_new(size))} pieces)")
