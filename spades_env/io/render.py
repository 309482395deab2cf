"""Pictures of a table: ``render_rgb(game, viewer=None) -> uint8[H, W, 3]``, drawn with Pillow.

One frame shows the four seats around a green table (two in the two-player game), each with its
name, bid and tricks won, the dealer's button and a yellow frame around the seat to act; the
hands (every hand face up, or with ``viewer`` set only that seat's, the others face down, and the
viewer at the bottom); the trick in progress in the middle (in the draw of the two-player game,
the shown card); and a score bar with each side's score, bags and games won, the rules, the
game, hand and phase.

Fonts, card faces and backs and the empty table are drawn once and cached, so a frame is a copy
of the table, a few pastes and a few lines of text (``benchmarks/render_speed.py`` measures the
frames per second). The AEC env and ``Spades-v0`` return these frames with
``render_mode="rgb_array"``; ``spades replay FILE --video OUT`` writes them as a video.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from spades_env.core import layout as L
from spades_env.core.cards import NUM_RANKS, SUIT_SYMBOLS, cards_from_mask
from spades_env.core.game import SpadesGame, seat_names

WIDTH, HEIGHT = 800, 600
CARD_W, CARD_H = 46, 64
FELT, FELT_EDGE = (28, 102, 58), (18, 70, 40)
BAR = (16, 40, 28)
TEXT, DIM, HILITE = (240, 240, 230), (170, 200, 180), (255, 214, 64)
RED, BLACK = (200, 30, 40), (20, 20, 20)
RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")

# where a seat sits, by its place clockwise from the bottom
BOTTOM, LEFT, TOP, RIGHT = range(4)


def _font_path(bold: bool) -> str | None:
    """DejaVu Sans (it has the suit symbols): from matplotlib's data, a dependency, found
    without importing matplotlib; else the system's; else None (Pillow's default font)."""
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    spec = importlib.util.find_spec("matplotlib")
    candidates = []
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            candidates.append(Path(loc) / "mpl-data" / "fonts" / "ttf" / name)
    candidates.append(Path("/usr/share/fonts/truetype/dejavu") / name)
    for c in candidates:
        if c.is_file():
            return str(c)
    return None


@functools.lru_cache(maxsize=16)
def font(size: int, bold: bool = False) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    """A cached font of ``size`` pixels."""
    path = _font_path(bold)
    if path is not None:
        return ImageFont.truetype(path, size)
    return ImageFont.load_default(size=size)


def _has_suit_glyphs() -> bool:
    return _font_path(False) is not None


@functools.lru_cache(maxsize=64)
def card_face(card: int) -> Image.Image:
    """The face of a card (cached)."""
    img = Image.new("RGB", (CARD_W, CARD_H), FELT)
    d = ImageDraw.Draw(img)
    d.rounded_rectangle((0, 0, CARD_W - 1, CARD_H - 1), radius=5, fill=(252, 252, 248), outline=(90, 90, 90))
    suit, rank = divmod(int(card), NUM_RANKS)
    color = RED if suit in (1, 2) else BLACK
    sym = SUIT_SYMBOLS[suit] if _has_suit_glyphs() else "CDHS"[suit]
    # the index (rank and suit on one line) stays visible where the cards of a hand overlap
    index = RANKS[rank] + sym
    f = font(14, bold=True) if len(index) < 3 else font(12, bold=True)
    d.text((3, 2), index, font=f, fill=color)
    d.text((CARD_W // 2 + 3, CARD_H // 2 + 10), sym, font=font(26), fill=color, anchor="mm")
    return img


@functools.lru_cache(maxsize=1)
def card_back() -> Image.Image:
    """The back of a card (cached)."""
    img = Image.new("RGB", (CARD_W, CARD_H), FELT)
    d = ImageDraw.Draw(img)
    d.rounded_rectangle((0, 0, CARD_W - 1, CARD_H - 1), radius=5, fill=(40, 60, 150), outline=(230, 230, 230))
    d.rounded_rectangle((5, 5, CARD_W - 6, CARD_H - 6), radius=3, outline=(150, 170, 230))
    for y in range(9, CARD_H - 8, 6):
        d.line((8, y, CARD_W - 9, y), fill=(70, 95, 180))
    return img


@functools.lru_cache(maxsize=1)
def _table() -> Image.Image:
    """The empty table (cached)."""
    img = Image.new("RGB", (WIDTH, HEIGHT), FELT_EDGE)
    d = ImageDraw.Draw(img)
    d.rounded_rectangle((8, 44, WIDTH - 9, HEIGHT - 9), radius=40, fill=FELT)
    d.ellipse(
        (WIDTH // 2 - 150, HEIGHT // 2 - 110 + 20, WIDTH // 2 + 150, HEIGHT // 2 + 110 + 20),
        outline=(48, 130, 80),
        width=3,
    )
    d.rectangle((0, 0, WIDTH, 40), fill=BAR)
    return img


def _place(seat: int, bottom_seat: int, n: int) -> int:
    """Where ``seat`` sits (BOTTOM, LEFT, TOP, RIGHT) with ``bottom_seat`` at the bottom."""
    if n == 2:
        return BOTTOM if seat == bottom_seat else TOP
    return (seat - bottom_seat) % 4


def _hand_origin(place: int, count: int) -> tuple[int, int, int, int]:
    """Top-left corner of the first card and the step between cards (dx, dy)."""
    cx, cy = WIDTH // 2, HEIGHT // 2 + 20
    if place in (BOTTOM, TOP):
        step = 31
        w = CARD_W + step * max(count - 1, 0)
        y = HEIGHT - CARD_H - 22 if place == BOTTOM else 76
        return cx - w // 2, y, step, 0
    step = 19
    h = CARD_H + step * max(count - 1, 0)
    x = 26 if place == LEFT else WIDTH - CARD_W - 26
    return x, cy - h // 2, 0, step


def _trick_pos(place: int) -> tuple[int, int]:
    cx, cy = WIDTH // 2 - CARD_W // 2, HEIGHT // 2 + 20 - CARD_H // 2
    return {BOTTOM: (cx, cy + 48), TOP: (cx, cy - 48), LEFT: (cx - 62, cy), RIGHT: (cx + 62, cy)}[place]


def _label_pos(place: int, count: int) -> tuple[int, int, str]:
    """Anchor of a seat's label (x, y, Pillow anchor)."""
    x, y, dx, dy = _hand_origin(place, max(count, 1))
    if place == BOTTOM:
        return WIDTH // 2, y - 8, "md"
    if place == TOP:
        return WIDTH // 2, y + CARD_H + 8, "ma"
    if place == LEFT:
        return x, y - 8, "ld"
    return x + CARD_W, y - 8, "rd"


def _bid_text(bid: int | str | None) -> str:
    if bid is None:
        return "-"
    if bid == "blind":
        return "Blind Nil"
    return "Nil" if bid == 0 else str(bid)


def render_rgb(game: SpadesGame, viewer: int | None = None, last_trick: bool = False) -> np.ndarray:
    """The table as an ``uint8[600, 800, 3]`` picture; ``viewer``: show only that seat's hand
    (the others face down) and put it at the bottom; None: every hand face up, South (or P0) at
    the bottom. ``last_trick``: when no trick is in progress, show the last completed one and
    who won it (videos show each trick before it is gathered)."""
    s = game.state
    n = game.num_seats
    names = seat_names(n)
    img = _table().copy()
    d = ImageDraw.Draw(img)
    f_small, f_mid, f_bold = font(14), font(16), font(16, bold=True)

    # score bar
    sides = ("NS", "EW") if n == 4 else names
    scores, bags, wins = game.scores, game.bags, game.game_wins
    x = 12
    for t in range(2):
        txt = f"{sides[t]} {scores[t]}"
        d.text((x, 10), txt, font=f_bold, fill=TEXT)
        x += int(d.textlength(txt, font=f_bold)) + 8
        sub = f"bags {bags[t]}  games {wins[t]}"
        d.text((x, 12), sub, font=f_small, fill=DIM)
        x += int(d.textlength(sub, font=f_small)) + 28
    turn = int(s[L.TURN])
    info = (
        f"{game.rules.name}  game {int(s[L.GAME_NUM]) + 1}  hand {int(s[L.HAND_NUM]) + 1}  {game.phase}"
        + (f"  {names[turn]} to act" if turn >= 0 else "")
    )
    d.text((WIDTH - 12, 12), info, font=f_small, fill=TEXT, anchor="ra")

    bottom = viewer if viewer is not None and 0 <= viewer < n else (2 if n == 4 else 0)
    bids, won = game.bids, game.tricks_won
    dealer = int(s[L.DEALER])
    back = card_back()
    for seat in range(n):
        place = _place(seat, bottom, n)
        cards = cards_from_mask(int(s[L.HANDS + seat]))
        show = viewer is None or viewer == seat
        x0, y0, dx, dy = _hand_origin(place, len(cards))
        for k, c in enumerate(cards):
            img.paste(card_face(c) if show else back, (x0 + k * dx, y0 + k * dy))
        lx, ly, anchor = _label_pos(place, len(cards))
        label = f"{names[seat]}   bid {_bid_text(bids[seat])}   won {won[seat]}"
        color = HILITE if seat == turn else TEXT
        d.text((lx, ly), label, font=f_mid, fill=color, anchor=anchor)
        if seat == turn:
            bb = d.textbbox((lx, ly), label, font=f_mid, anchor=anchor)
            d.rounded_rectangle(
                (bb[0] - 6, bb[1] - 4, bb[2] + 6, bb[3] + 4), radius=6, outline=HILITE, width=2
            )
        if seat == dealer:
            bb = d.textbbox((lx, ly), label, font=f_mid, anchor=anchor)
            cx = bb[2] + 22 if place != RIGHT else bb[0] - 22
            cy = (bb[1] + bb[3]) // 2
            d.ellipse((cx - 9, cy - 9, cx + 9, cy + 9), fill=(250, 250, 250), outline=(60, 60, 60))
            d.text((cx, cy), "D", font=font(12, bold=True), fill=BLACK, anchor="mm")

    # the trick in progress, in the order it was played
    size, leader = int(s[L.TRICK_SIZE]), int(s[L.TRICK_LEADER])
    for k in range(size):
        seat = (leader + k) % n
        card = int(s[L.TRICK_CARDS + seat])
        if card >= 0:
            img.paste(card_face(card), _trick_pos(_place(seat, bottom, n)))
    winner = int(s[L.LAST_TRICK_WINNER])
    if last_trick and size == 0 and winner >= 0:
        for seat in range(n):
            card = int(s[L.LAST_TRICK + seat])
            if card >= 0:
                img.paste(card_face(card), _trick_pos(_place(seat, bottom, n)))
        d.text(
            (WIDTH // 2, HEIGHT // 2 + 20 - 110 + 8),
            f"{names[winner]} wins the trick",
            font=f_mid,
            fill=HILITE,
            anchor="ma",
        )
    if game.phase == "draw" and (viewer is None or viewer == turn):
        cx, cy = _trick_pos(LEFT)
        img.paste(card_face(int(s[L.DECK + int(s[L.STOCK_POS])])), (cx, cy))
        d.text((cx + CARD_W // 2, cy + CARD_H + 4), "drawn", font=f_small, fill=DIM, anchor="ma")
    d.text(
        (WIDTH // 2, HEIGHT // 2 + 20 + 110 - 6),
        f"trick {int(s[L.TRICKS_PLAYED]) + (1 if game.phase == 'play' else 0)}"
        + ("   spades broken" if s[L.SPADES_BROKEN] else ""),
        font=f_small,
        fill=DIM,
        anchor="md",
    )
    return np.asarray(img)


__all__ = ["HEIGHT", "WIDTH", "render_rgb"]
