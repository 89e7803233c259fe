"""The rollover drawn: PNG charts for the page, with matplotlib's Agg backend.

- clock_chart: each flavour's reading of the clock (probe `clock`) against
  true time, across the rollover. Right readings lie on the true-time line in
  the upper panel; readings that wrapped drop to the lower panel (1901); calls
  that failed (glibc's EOVERFLOW) leave a gap there and show as a bar in the
  error strip. True time is what the 64-bit flavours read, the wrapped
  readings plus 2**32, or, when every flavour failed, the 64-bit readings of
  the steps around it.
- filetimes_chart: for a file-times run (probe `filetimes`), the time each
  flavour sent against the time the filesystem stored: on the diagonal when
  kept as sent, flat at the filesystem's limit when clamped, far left when
  the 32-bit program sent a wrapped time.

Data in (observations), PNG bytes out; nothing is read or written here.
"""
from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import Any
from dataclasses import dataclass

from sandbox.base.timefmt import INT32_MIN, ROLLOVER, UINT32_SPAN, format_time
from sandbox.run.observations import Observation

CLOCK_PROBE = "clock"
FILETIMES_PROBE = "filetimes"
SETTERS = ("utimensat", "futimens", "utimes")
FLAVOUR_STYLE: dict[str, tuple[str, str, float, bool]] = {  # colour, marker, size, filled
    "time32-syscall": ("#c0392b", "v", 7.0, True),
    "time32-libc": ("#8e44ad", "X", 7.0, True),
    "time64": ("#1e8449", "o", 10.0, False),
    "native64": ("#1f5fa8", "o", 4.0, True),
}
OTHER_COLOURS = ("#b9770e", "#117a65", "#6c3483", "#34495e", "#d35400")
SECONDS_PER_YEAR = 365.2425 * 86400
DPI = 100
PALETTE = 64


@dataclass(frozen=True)
class Chart:
    title: str
    png: bytes
    alt: str  # what the chart shows, in words (the page's alt text and caption)


@dataclass(frozen=True)
class Reading:
    flavour: str
    call: str
    order: int  # the phase's place in the run
    truth: float  # the true time of the reading, seconds since the epoch
    value: int | None  # what the flavour read; None when the call failed
    errno: str | None

    @property
    def wrapped(self) -> bool:
        return self.value is not None and self.value < self.truth - UINT32_SPAN / 2


def _style(flavour: str, index: int) -> tuple[str, str, float, bool]:
    return FLAVOUR_STYLE.get(flavour, (OTHER_COLOURS[index % len(OTHER_COLOURS)], "D", 6.0, True))


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def clock_readings(observations: Iterable[Observation], phases: Sequence[str]) -> list[Reading]:
    """The clock probe's readings of these phases (in this order), each with its true time."""
    order = {phase: n for n, phase in enumerate(phases)}
    seen = [o for o in observations if o.probe == CLOCK_PROBE and o.phase in order]
    truth: dict[str, float] = {}
    for phase in order:
        values = [_int(o.values.get("seconds")) for o in seen if o.phase == phase]
        right = [v for v in values if v is not None and v >= 0]
        wrapped = [v + UINT32_SPAN for v in values if v is not None and INT32_MIN <= v < 0]
        known = right or wrapped
        if known:
            truth[phase] = float(max(known))
    known_phases = [p for p in order if p in truth]
    for phase in order:  # every flavour failed: between its neighbours
        if phase not in truth and known_phases:
            before = [truth[p] for p in known_phases if order[p] < order[phase]]
            after = [truth[p] for p in known_phases if order[p] > order[phase]]
            truth[phase] = before[-1] if before else after[0]
    readings = []
    for o in seen:
        if o.phase not in truth:
            continue
        value = _int(o.values.get("seconds"))
        if value is None and o.errno is None:
            continue
        true = truth[o.phase]
        if value is not None:  # its own reading is the best truth it has
            true = float(value + UINT32_SPAN) if INT32_MIN <= value < 0 and true > ROLLOVER else float(value)
            true = true if abs(true - truth[o.phase]) < 3600 else truth[o.phase]
        readings.append(Reading(o.flavour, o.call, order[o.phase], true, value, o.errno))
    return sorted(readings, key=lambda r: (r.order, r.truth))


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _png(fig: Any) -> bytes:  # matplotlib ships no types: its objects are Any
    """The figure as a PNG of at most PALETTE colours (a sixth of the size;
    the charts have few colours), or as drawn when PIL is missing."""
    plt = _pyplot()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=DPI)
    plt.close(fig)
    try:
        from PIL import Image
    except ImportError:
        return out.getvalue()
    image = Image.open(io.BytesIO(out.getvalue())).convert("RGB")
    small = io.BytesIO()
    image.quantize(colors=PALETTE, method=Image.Quantize.FASTOCTREE).save(small, format="PNG", optimize=True)
    return small.getvalue()


def _hms(seconds: float, _pos: object = None) -> str:
    return format_time(int(round(seconds)))[11:19]


def _date_time(seconds: float, _pos: object = None) -> str:
    return format_time(int(round(seconds))).replace("T", " ")[:19]


def clock_chart(readings: Sequence[Reading], title: str) -> Chart | None:
    """Readings against true time; None when there is nothing to draw."""
    if not readings:
        return None
    plt = _pyplot()
    flavours = list(dict.fromkeys(r.flavour for r in readings))
    right = [r for r in readings if r.value is not None and not r.wrapped]
    wrapped = [r for r in readings if r.wrapped]
    failed = [r for r in readings if r.value is None]
    lo, hi = min(r.truth for r in readings), max(r.truth for r in readings)
    if lo - 120 <= ROLLOVER <= hi + 120:
        lo, hi = min(lo, ROLLOVER - 2), max(hi, ROLLOVER + 2)
    pad = max(2.0, (hi - lo) * 0.06)
    xlo, xhi = lo - pad, hi + pad
    panels = ["right"] + (["wrapped"] if wrapped else []) + (["failed"] if failed else [])
    ratios = {"right": 3.0, "wrapped": 2.0, "failed": 0.35 + 0.3 * len({r.flavour for r in failed})}
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(7.6, 1.0 + 0.62 * sum(
        ratios[p] for p in panels)), gridspec_kw={"height_ratios": [ratios[p] for p in panels],
                                                  "hspace": 0.1})
    axes = list(axes) if len(panels) > 1 else [axes]
    ax = dict(zip(panels, axes))
    top = ax["right"]
    top.plot([xlo, xhi], [xlo, xhi], color="#999999", lw=1, ls="--", zorder=1, label="true time")
    if "wrapped" in ax:
        ax["wrapped"].plot([xlo, xhi], [xlo - UINT32_SPAN, xhi - UINT32_SPAN], color="#999999", lw=1,
                           ls=":", zorder=1, label="true time − 2³²")
    failed_rows = list(dict.fromkeys(r.flavour for r in failed))
    for n, flavour in enumerate(flavours):
        colour, marker, size, filled = _style(flavour, n)
        mine = [r for r in readings if r.flavour == flavour]
        face = colour if filled else "none"
        for panel, rows in (("right", [r for r in mine if r.value is not None and not r.wrapped]),
                            ("wrapped", [r for r in mine if r.wrapped])):
            if rows:
                ax[panel].plot([r.truth for r in rows], [r.value for r in rows], ls="none", marker=marker,
                               ms=size, mfc=face, mec=colour, color=colour, zorder=3,
                               label=flavour if panel == "right" or not any(
                                   r.value is not None and not r.wrapped for r in mine) else None)
        _draw_path(ax, mine, colour)
        if flavour in failed_rows:
            row = failed_rows.index(flavour)
            bad = [r for r in mine if r.value is None]
            errnos = list(dict.fromkeys(r.errno or "?" for r in bad))
            start = min(r.truth for r in bad)
            start = ROLLOVER if start >= ROLLOVER and any(
                r.truth < ROLLOVER and r.value is not None for r in mine) else start
            end = max(r.truth for r in bad)
            ax["failed"].plot([start, end], [row, row], color=colour, lw=6, alpha=0.35, solid_capstyle="butt")
            ax["failed"].plot([r.truth for r in bad], [row] * len(bad), ls="none", marker=marker, ms=size,
                              mfc=face, mec=colour, color=colour)
            ax["failed"].text(end + pad * 0.3, row, f"{flavour}: {'/'.join(errnos)}", va="center",
                              fontsize=8, color=colour, clip_on=False)
    for axis in axes:
        axis.set_xlim(xlo, xhi)
        axis.grid(True, color="#eeeeee", lw=0.8)
        if xlo <= ROLLOVER <= xhi:
            axis.axvline(ROLLOVER, color="#c0392b", lw=1.2, alpha=0.7, zorder=2)
    if xlo <= ROLLOVER <= xhi:
        top.text(ROLLOVER, 0.97, " rollover 03:14:08", transform=top.get_xaxis_transform(),
                 color="#c0392b", fontsize=7, ha="left", va="top")
    top.yaxis.set_major_formatter(_date_time)
    top.set_ylabel("read (upper: right)", fontsize=8)
    values = [r.value for r in right if r.value is not None]
    if values:
        ylo, yhi = min(values + [xlo]), max(values + [xhi])
        top.set_ylim(ylo - (yhi - ylo) * 0.08, yhi + (yhi - ylo) * 0.08)
    if "wrapped" in ax:
        w = ax["wrapped"]
        w.yaxis.set_major_formatter(_date_time)
        w.set_ylabel("read (wrapped)", fontsize=8)
        wv = [r.value for r in wrapped if r.value is not None]
        wlo, whi = min(wv + [xlo - UINT32_SPAN]), max(wv + [xhi - UINT32_SPAN])
        w.set_ylim(wlo - (whi - wlo) * 0.08, whi + (whi - wlo) * 0.08)
        w.legend(loc="lower right", fontsize=7, frameon=False)
    if "failed" in ax:
        f = ax["failed"]
        f.set_ylim(-0.7, len(failed_rows) - 0.3)
        f.set_yticks([])
        f.set_ylabel("failed", fontsize=8)
    for axis in axes:
        axis.tick_params(labelsize=7)
    axes[-1].xaxis.set_major_formatter(_hms)
    axes[-1].set_xlabel(f"true time (UTC, {format_time(int(lo))[:10]})", fontsize=8)
    top.legend(loc="lower right", fontsize=7, frameon=False, ncol=1)
    top.set_title(title, fontsize=9, loc="left")
    height = fig.get_size_inches()[1]
    fig.subplots_adjust(left=0.2, right=0.78 if failed else 0.97, top=1 - 0.35 / height,
                        bottom=0.55 / height)
    alt = _clock_alt(readings)
    return Chart(title, _png(fig), alt)


def _draw_path(ax: dict[str, Any], mine: list[Reading], colour: str) -> None:
    """Join a flavour's readings in time order; a reading that wrapped after a
    right one falls from the rollover on the upper panel to the rollover on
    the lower one; a failed reading breaks the line."""
    for a, b in zip(mine, mine[1:]):
        if a.value is None or b.value is None:
            if a.value is not None and not a.wrapped and b.truth >= ROLLOVER > a.truth:
                ax["right"].plot([a.truth, ROLLOVER], [a.value, ROLLOVER], color=colour, lw=1,
                                 alpha=0.6)
            continue
        if a.wrapped == b.wrapped:
            panel = "wrapped" if a.wrapped else "right"
            ax[panel].plot([a.truth, b.truth], [a.value, b.value], color=colour, lw=1, alpha=0.6)
        elif not a.wrapped and b.wrapped and "wrapped" in ax:
            ax["right"].plot([a.truth, ROLLOVER], [a.value, ROLLOVER], color=colour, lw=1, alpha=0.6)
            ax["wrapped"].plot([ROLLOVER, b.truth], [ROLLOVER - UINT32_SPAN, b.value], color=colour, lw=1,
                               alpha=0.6)


def _clock_alt(readings: Sequence[Reading]) -> str:
    parts = []
    for flavour in dict.fromkeys(r.flavour for r in readings):
        mine = [r for r in readings if r.flavour == flavour]
        last = mine[-1]
        what = (f"failed with {last.errno}" if last.value is None else
                f"read {format_time(last.value)}" + (" (wrapped)" if last.wrapped else ""))
        parts.append(f"{flavour} {what} at {format_time(int(last.truth))}")
    return "Clock readings against true time; last reading: " + "; ".join(parts) + "."


@dataclass(frozen=True)
class FileTime:
    flavour: str
    call: str
    phase: str
    sent: int
    stored: int


def file_times(observations: Iterable[Observation]) -> list[FileTime]:
    found = []
    for o in observations:
        sent, stored = _int(o.values.get("sent")), _int(o.values.get("seconds"))
        if o.probe == FILETIMES_PROBE and o.call in SETTERS and sent is not None and stored is not None:
            found.append(FileTime(o.flavour, o.call, o.phase, sent, stored))
    return found


def _year(seconds: float) -> float:
    return 1970 + seconds / SECONDS_PER_YEAR


def filetimes_chart(times: Sequence[FileTime], title: str) -> Chart | None:
    """Sent against stored, in years; None when the run set no file times."""
    if not times:
        return None
    plt = _pyplot()
    fig, axis = plt.subplots(figsize=(7.6, 3.6))
    years = [_year(t.sent) for t in times] + [_year(t.stored) for t in times]
    lo, hi = min(years + [1900.0]) - 10, max(years + [2040.0]) + 15
    axis.plot([lo, hi], [lo, hi], color="#999999", lw=1, ls="--", label="stored as sent", zorder=1)
    axis.axvline(_year(ROLLOVER), color="#c0392b", lw=1, alpha=0.5, zorder=1)
    axis.text(_year(ROLLOVER), 0.02, " 2038", transform=axis.get_xaxis_transform(), color="#c0392b",
              fontsize=7, ha="left", va="bottom")
    flavours = list(dict.fromkeys(t.flavour for t in times))
    for n, flavour in enumerate(flavours):
        colour, marker, size, filled = _style(flavour, n)
        mine = [t for t in times if t.flavour == flavour]
        axis.plot([_year(t.sent) for t in mine], [_year(t.stored) for t in mine], ls="none", marker=marker,
                  ms=size, mfc=colour if filled else "none", mec=colour, label=flavour, zorder=3)
    clamped = [t for t in times if t.stored < t.sent]
    if clamped:
        limit = max(t.stored for t in clamped)
        axis.axhline(_year(limit), color="#b9770e", lw=1, ls="-.", zorder=1)
        axis.text(lo + 2, _year(limit), f" kept at most {format_time(limit)}", va="bottom", fontsize=7,
                  color="#b9770e")
    axis.set_xlim(lo, hi)
    axis.set_ylim(lo, hi)
    axis.set_xlabel("time the program sent (year)", fontsize=8)
    axis.set_ylabel("time the filesystem stored (year)", fontsize=8)
    axis.tick_params(labelsize=7)
    axis.grid(True, color="#eeeeee", lw=0.8)
    axis.legend(loc="upper left", fontsize=7, frameon=False)
    axis.set_title(title, fontsize=9, loc="left")
    fig.subplots_adjust(left=0.1, right=0.97, top=0.9, bottom=0.14)
    wrapped = sorted({t.flavour for t in times if t.sent < 0 or any(
        u.sent - t.sent >= UINT32_SPAN for u in times if u.phase == t.phase)})
    alt = (f"File times sent against stored, {len(times)} settings: "
           + (f"clamped at {format_time(max(t.stored for t in clamped))}; " if clamped else "none clamped; ")
           + (f"wrapped times sent by {', '.join(wrapped)}." if wrapped else "no wrapped times sent."))
    return Chart(title, _png(fig), alt)
