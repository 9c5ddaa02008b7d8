//! The raw position as a 24-byte `Copy` value: bitboards, hands, side to move, pending removal,
//! draw counters and a Zobrist hash, with move generation, validation and application.

use std::fmt;

use crate::action::{Action, ActionMask, MASK_WORDS, NUM_ACTIONS};
use crate::board::{Board, NINE};
use crate::error::{ActionError, PositionError};
use crate::notation::{Move, NotationError};
use crate::outcome::{DrawReason, Outcome, WinReason};
use crate::rng::splitmix64;
use crate::rules::{Rules, Variant};
use crate::tables::{LaskerSpec, MoveTables, NineSpec, Spec, ThreeSpec, with_spec};
use crate::types::{BitBoard, Color, NUM_POINTS, Point};

/// Pieces each player starts with in hand (nine men's morris: [`Variant::pieces`]).
pub const PIECES_PER_PLAYER: u8 = Variant::Nine.pieces();

/// The most pieces a player of any variant starts with (twelve men's morris's 12).
const MAX_PIECES: usize = {
    let mut most = 0;
    let mut i = 0;
    while i < Variant::ALL.len() {
        let n = Variant::ALL[i].pieces() as usize;
        if n > most {
            most = n;
        }
        i += 1;
    }
    most
};

/// Zobrist keys, generated at compile time from a fixed SplitMix64 stream.
struct Zobrist {
    piece: [[u64; NUM_POINTS]; 2],
    in_hand: [[u64; MAX_PIECES + 1]; 2],
    black_to_move: u64,
    removal_pending: u64,
    /// With `removal_pending`, a second removal to follow (morabaraba's double mill).
    second_removal: u64,
}

const ZOBRIST: Zobrist = {
    let mut state = 0x4e69_6e65_4d65_6e73; // "NineMens"
    let mut piece = [[0u64; NUM_POINTS]; 2];
    let mut in_hand = [[0u64; MAX_PIECES + 1]; 2];
    let mut c = 0;
    while c < 2 {
        let mut p = 0;
        while p < NUM_POINTS {
            piece[c][p] = splitmix64(&mut state);
            p += 1;
        }
        let mut h = 0;
        while h <= PIECES_PER_PLAYER as usize {
            in_hand[c][h] = splitmix64(&mut state);
            h += 1;
        }
        c += 1;
    }
    let black_to_move = splitmix64(&mut state);
    let removal_pending = splitmix64(&mut state);
    // Hands above nine's come after nine's keys in the stream, so that nine's hashes are the
    // ones they always were.
    let mut c = 0;
    while c < 2 {
        let mut h = PIECES_PER_PLAYER as usize + 1;
        while h <= MAX_PIECES {
            in_hand[c][h] = splitmix64(&mut state);
            h += 1;
        }
        c += 1;
    }
    let second_removal = splitmix64(&mut state);
    Zobrist { piece, in_hand, black_to_move, removal_pending, second_removal }
};

/// How a player moves at the moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Pieces in hand: each turn places one (in Lasker morris, or slides a piece on the board).
    Placing,
    /// Hand empty: each turn slides a piece to an adjacent empty point.
    Moving,
    /// Hand empty, exactly 3 pieces on board, and flying allowed: a piece may move to any empty point.
    Flying,
}

/// A position: everything the rules need except the repetition history, in 24 bytes.
///
/// It carries no history (see [`Game`](crate::Game) for that), so it is cheap to copy into
/// search trees. The draw counters it holds are the turn count and the number of plies since
/// the last removal (for the N-move rule).
///
/// ```
/// use morris_env::{Position, Rules, Action};
/// let rules = Rules::openspiel();
/// let mut pos = Position::start();
/// assert_eq!(pos.legal_actions(&rules).count(), 24);
/// pos.apply(Action(4), &rules).unwrap();                 // White places on d6
/// assert!(pos.apply(Action(4), &rules).is_err());        // occupied: rejected, position unchanged
/// assert_eq!(pos.legal_actions(&rules).count(), 23);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    pieces: [BitBoard; 2],
    hash: u64,
    in_hand: [u8; 2],
    side: Color,
    /// Removals the player to move still has to make: 0, 1, or 2 after morabaraba's double
    /// mill.
    removals: u8,
    /// Plies of sliding or flying since the last removal (the N-move counter).
    quiet_plies: u16,
    /// Turns played: incremented each time play passes to the other player.
    turns: u16,
}

const _: () = assert!(std::mem::size_of::<Position>() <= 24);

impl Default for Position {
    fn default() -> Position {
        Position::start()
    }
}

impl Position {
    /// The start position of nine men's morris: empty board, 9 pieces in each hand, White to
    /// move ([`Position::start_for`] of any variant).
    pub const fn start() -> Position {
        Position::start_for(&Rules::standard())
    }

    /// The start position of `rules`' variant: empty board, its pieces in each hand, White to
    /// move.
    pub const fn start_for(rules: &Rules) -> Position {
        let n = rules.variant.pieces();
        Position {
            pieces: [BitBoard::EMPTY; 2],
            hash: ZOBRIST.in_hand[0][n as usize] ^ ZOBRIST.in_hand[1][n as usize],
            in_hand: [n; 2],
            side: Color::White,
            removals: 0,
            quiet_plies: 0,
            turns: 0,
        }
    }

    /// A nine men's morris position from its parts ([`Position::from_parts_for`] of any
    /// variant).
    ///
    /// # Errors
    /// As [`Position::from_parts_for`].
    pub fn from_parts(
        white: BitBoard,
        black: BitBoard,
        in_hand: [u8; 2],
        side: Color,
        removal_pending: bool,
    ) -> Result<Position, PositionError> {
        Position::from_parts_for(&Rules::standard(), white, black, in_hand, side, removal_pending as u8)
    }

    /// Builds a position of `rules`' variant from its parts, with the turn count set to the
    /// turns that the placements made so far took (exact while pieces are in hand, except in
    /// Lasker morris, whose slides while placing it cannot see; once both hands are empty the
    /// real count is unknown) and the N-move counter at zero (see [`Position::with_counters`]).
    ///
    /// # Errors
    /// If the parts cannot arise in a game: overlapping pieces, more pieces for a player than
    /// the variant has, hands that break the alternation of placements (White places first;
    /// not in Lasker morris, where a turn may slide instead), a pending removal with nothing to
    /// remove, or more `removals` pending than one move earns in the variant.
    pub fn from_parts_for(
        rules: &Rules,
        white: BitBoard,
        black: BitBoard,
        in_hand: [u8; 2],
        side: Color,
        removals: u8,
    ) -> Result<Position, PositionError> {
        let pieces = rules.variant.pieces();
        if removals > rules.variant.max_removals() {
            return Err(PositionError::TooManyRemovals(removals));
        }
        let removal_pending = removals > 0;
        let full = rules.variant.board().full;
        let (white, black) = (white & full, black & full);
        if let Some(p) = (white & black).first() {
            return Err(PositionError::Overlap(p));
        }
        for (c, bb) in [(Color::White, white), (Color::Black, black)] {
            if bb.count() + in_hand[c.index()] as u32 > pieces as u32 {
                return Err(PositionError::TooManyPieces(c));
            }
        }
        // White places first and placements alternate, so Black holds the same number of
        // pieces in hand as White, or one more. The placer, who may be removing, follows.
        let [w, b] = in_hand;
        let placer = if b == w { Color::White } else { Color::Black };
        let consistent = match (b as i16 - w as i16, w == 0 && b == 0) {
            _ if rules.variant.slides_while_placing() => true,
            (_, true) => true,
            (0 | 1, false) => {
                let mover = if removal_pending { placer.opponent() } else { placer };
                side == mover
            }
            _ => false,
        };
        if !consistent {
            return Err(PositionError::InconsistentHands);
        }
        let opp = if side == Color::White { black } else { white };
        if removal_pending && opp.is_empty() {
            return Err(PositionError::NothingToRemove);
        }
        let mut pos = Position {
            pieces: [white, black],
            hash: 0,
            in_hand,
            side,
            removals,
            quiet_plies: 0,
            // Play passes after each placement, except one that closed a mill still to be
            // completed by its removal.
            turns: (2 * pieces - w - b).saturating_sub(removal_pending as u8) as u16,
        };
        pos.hash = pos.compute_hash();
        Ok(pos)
    }

    /// The same position with the turn count and the N-move counter set.
    pub const fn with_counters(mut self, turns: u16, quiet_plies: u16) -> Position {
        self.turns = turns;
        self.quiet_plies = quiet_plies;
        self
    }

    /// The same position with the pieces on the board replaced (hands, side, pending removal
    /// and counters kept) and the hash recomputed: for images under a symmetry, which map a
    /// position of the game to one.
    pub(crate) fn with_pieces(mut self, white: BitBoard, black: BitBoard) -> Position {
        self.pieces = [white, black];
        self.hash = self.compute_hash();
        self
    }

    /// The Zobrist hash computed from scratch (the stored one is kept incrementally).
    pub fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for c in Color::ALL {
            for p in self.pieces[c.index()] {
                h ^= ZOBRIST.piece[c.index()][p.index()];
            }
            h ^= ZOBRIST.in_hand[c.index()][self.in_hand[c.index()] as usize];
        }
        if self.side == Color::Black {
            h ^= ZOBRIST.black_to_move;
        }
        if self.removals > 0 {
            h ^= ZOBRIST.removal_pending;
        }
        if self.removals > 1 {
            h ^= ZOBRIST.second_removal;
        }
        h
    }

    // ----- queries -------------------------------------------------------------------------

    /// The player to move (who also makes a pending removal). Not always the opposite of the
    /// previous mover: after closing a mill, the same player moves again to remove.
    #[inline]
    pub const fn current_player(&self) -> Color {
        self.side
    }

    /// The pieces of `c` on the board.
    #[inline]
    pub const fn pieces(&self, c: Color) -> BitBoard {
        self.pieces[c as usize]
    }

    /// All occupied points.
    #[inline]
    pub const fn occupied(&self) -> BitBoard {
        BitBoard(self.pieces[0].0 | self.pieces[1].0)
    }

    /// All empty points of the 24-point boards. On a smaller board (six men's morris) the set
    /// also holds the 24-point numbering's points past the board's: intersect it with
    /// `rules.variant.board().full` (the rules' own uses either do, or read it through the
    /// board's line tables, which name no such point).
    #[inline]
    pub const fn empty(&self) -> BitBoard {
        BitBoard(!(self.pieces[0].0 | self.pieces[1].0) & BitBoard::FULL.0)
    }

    /// Pieces `c` still has in hand.
    #[inline]
    pub const fn in_hand(&self, c: Color) -> u8 {
        self.in_hand[c as usize]
    }

    /// Pieces of `c` on the board plus in hand; a player reduced to 2 loses.
    #[inline]
    pub const fn num_pieces(&self, c: Color) -> u32 {
        self.pieces[c as usize].count() + self.in_hand[c as usize] as u32
    }

    /// Whether the player to move must now remove an opposing piece.
    #[inline]
    pub const fn is_removal_pending(&self) -> bool {
        self.removals > 0
    }

    /// Removals the player to move still has to make: 0, 1, or 2 after morabaraba's double
    /// mill (each its own action; the second is skipped when the first leaves no piece on the
    /// board).
    #[inline]
    pub const fn removals_pending(&self) -> u8 {
        self.removals
    }

    /// The Zobrist hash of board, hands, side to move and pending removal (not the counters).
    #[inline]
    pub const fn hash(&self) -> u64 {
        self.hash
    }

    /// Turns played so far (a placement or move with its removal is one turn).
    #[inline]
    pub const fn turns(&self) -> u16 {
        self.turns
    }

    /// Plies of sliding or flying since the last removal (the N-move counter).
    #[inline]
    pub const fn quiet_plies(&self) -> u16 {
        self.quiet_plies
    }

    /// How `c` moves now under `rules`.
    #[inline]
    pub const fn phase(&self, c: Color, rules: &Rules) -> Phase {
        if self.in_hand[c as usize] > 0 {
            Phase::Placing
        } else if rules.flying && self.pieces[c as usize].count() == 3 {
            Phase::Flying
        } else {
            Phase::Moving
        }
    }

    /// Both players' pieces in one integer: White's in bits 0..24, Black's in bits 24..48.
    #[inline]
    pub const fn board_key(&self) -> u64 {
        self.pieces[0].0 as u64 | (self.pieces[1].0 as u64) << 24
    }

    /// The opposing pieces that may be removed now under `rules`: those outside mills, or all
    /// of them when every one stands in a mill.
    #[inline]
    pub fn removable(&self, rules: &Rules) -> BitBoard {
        let opp = self.pieces[self.side.opponent().index()];
        let free = opp - pieces_in_mills(rules, opp);
        if free.is_empty() { opp } else { free }
    }

    // ----- outcome and move generation -----------------------------------------------------

    /// Whether the player to move has at least one legal action (ignoring whether the game
    /// is already decided).
    #[inline]
    pub fn has_legal_action(&self, rules: &Rules) -> bool {
        let me = self.side.index();
        if self.removals > 0 || self.in_hand[me] > 0 {
            // A pending removal always has a target, and a hand always has an empty point.
            return true;
        }
        let empty = self.empty();
        match self.phase(self.side, rules) {
            Phase::Flying => !empty.is_empty(),
            _ => !(neighbours(rules, self.pieces[me]) & empty).is_empty(),
        }
    }

    /// The outcome by every rule except repetition, which needs the history
    /// ([`Game::outcome`](crate::Game::outcome) adds it). Wins take precedence over draws.
    #[inline(always)]
    pub fn outcome(&self, rules: &Rules) -> Outcome {
        for c in Color::ALL {
            if self.num_pieces(c) <= 2 {
                return Outcome::Win { winner: c.opponent(), reason: WinReason::TooFewPieces };
            }
        }
        // A line of three (three men's morris) has already won; a full board leaves nobody a
        // move, and where the variant draws it, that comes before Blocked. One test of the
        // variant for both, as there was for the full board alone.
        if rules.variant.ends_on_the_board() {
            if let Some(winner) = self.line_maker(rules) {
                return Outcome::Win { winner, reason: WinReason::Line };
            }
            if rules.variant.full_board_draws() && self.is_board_full() {
                return Outcome::Draw(DrawReason::BoardFull);
            }
        }
        if !self.has_legal_action(rules) {
            return Outcome::Win { winner: self.side.opponent(), reason: WinReason::Blocked };
        }
        self.draw_outcome(rules)
    }

    /// Whether both hands are empty and every point is taken (with no removal pending): the end
    /// of a placement phase that closed no mill, on a board with as many points as pieces.
    #[inline]
    fn is_board_full(&self) -> bool {
        self.in_hand[0] == 0
            && self.in_hand[1] == 0
            && self.removals == 0
            && self.occupied().0 == BitBoard::FULL.0
    }

    /// In a variant where a line of three wins ([`Variant::line_wins`]), the player who has made
    /// one: the last to move, since the game ends there (at most one player ever has a line).
    /// Inline with three's constant lines and no call: a call here, even never taken, cost
    /// nine's `Game` playouts 8-10% (registers saved around it); measured in
    /// docs/performance.md.
    #[inline(always)]
    fn line_maker(&self, rules: &Rules) -> Option<Color> {
        if !rules.variant.line_wins() {
            return None;
        }
        // Three men's morris is the one such variant: its 8 lines, constants, no call.
        let [white, black] = self.pieces;
        if !ThreeSpec::pieces_in_mills(white).is_empty() {
            Some(Color::White)
        } else if !ThreeSpec::pieces_in_mills(black).is_empty() {
            Some(Color::Black)
        } else {
            None
        }
    }

    /// The draw rules held in the position itself: the N-move rule and the turn cap.
    #[inline]
    pub(crate) fn draw_outcome(&self, rules: &Rules) -> Outcome {
        // A pending removal is checked after it is made: the removal resets the N-move counter.
        if let Some(n) = rules.n_move_rule
            && self.removals == 0
            && self.quiet_plies as u32 >= n
        {
            return Outcome::Draw(DrawReason::NMoveRule);
        }
        if let Some(cap) = rules.turn_cap
            && self.turns as u32 >= cap
        {
            return Outcome::Draw(DrawReason::TurnCap);
        }
        Outcome::Ongoing
    }

    /// The legal actions, empty when [`Position::outcome`] says the game is over.
    #[inline(always)]
    pub fn legal_actions(&self, rules: &Rules) -> ActionMask {
        // A blocked player has no legal action anyway, so only the other end conditions are
        // checked here; that saves a neighbourhood computation on every call. (A full board
        // leaves no move either; a line of three does, so it is asked.)
        if self.is_decided_by_material()
            || self.draw_outcome(rules).is_terminal()
            || self.line_maker(rules).is_some()
        {
            return ActionMask::EMPTY;
        }
        self.legal_actions_unchecked(rules)
    }

    /// Whether a player is down to 2 pieces (on board plus in hand).
    #[inline]
    fn is_decided_by_material(&self) -> bool {
        self.num_pieces(Color::White) <= 2 || self.num_pieces(Color::Black) <= 2
    }

    /// The actions the rules of play allow, without checking whether the game is already over
    /// (after a line of three, the moves that would follow if it had not ended the game).
    #[inline(always)]
    pub fn legal_actions_unchecked(&self, rules: &Rules) -> ActionMask {
        let mut mask = ActionMask::EMPTY;
        let me = self.side.index();
        if self.removals > 0 {
            mask.0[0] = self.removable(rules).0 as u64;
        } else if self.in_hand[me] > 0 {
            if rules.variant.is_nine() {
                mask.0[0] = self.empty().0 as u64;
            } else {
                if rules.variant.slides_while_placing() {
                    // Lasker morris: slides (never flights: flying needs an empty hand) besides
                    // the placements.
                    mask = self.moves::<LaskerSpec>(false);
                }
                // The empty points of the variant's board (six men's morris has 16).
                mask.0[0] |= (self.empty() & rules.variant.board().full).0 as u64;
            }
        } else {
            // Every generator inline: a mask returned by an out-of-line call would pass through
            // memory, and callers that read it at once (perft's counts, playouts' sampling)
            // stall on reloading it (measured: perft 30% slower; cold calls for Lasker's
            // generators alone cost nine's playouts a third of their speed, and one for six's
            // cost nine's `Game` playouts 19%). Nine's and Lasker's generators are compiled
            // with their tables; twelve, morabaraba and six share a third copy that reads its
            // tables at run time and loops over the most pieces any of them has (measured on
            // nine's `Game` playouts against this: a fourth compiled copy for six -11%, the
            // shared copy with its loop count read from the tables -19%). The placing branch
            // asks "nine?" first, which got nine's `Game` playouts back to their speed before
            // Lasker (docs/performance.md).
            let flying = self.phase(self.side, rules) == Phase::Flying;
            mask = if rules.variant.is_nine() {
                self.moves::<NineSpec>(flying)
            } else if rules.variant.slides_while_placing() {
                self.moves::<LaskerSpec>(flying)
            } else {
                self.moves_by(MoveTables::of(rules.variant), MoveTables::MOST_PIECES, flying)
            };
        }
        mask
    }

    /// The slides (or, when `flying`, the flights) of the player to move, by `S`'s lines.
    #[inline(always)]
    fn moves<S: Spec>(&self, flying: bool) -> ActionMask {
        self.moves_by(&S::MOVES, S::PIECES, flying)
    }

    /// The slides (or, when `flying`, the flights) of the player to move, by `tables`, for a
    /// player with at most `pieces` pieces on the board.
    #[inline(always)]
    fn moves_by(&self, tables: &MoveTables, pieces: u8, flying: bool) -> ActionMask {
        let me = self.side.index();
        let empty = self.empty();
        // Move actions of piece `from` are bits N + N·from .. +N, N a multiple of 8: whole
        // bytes, from byte `chunk[from]` (3 + 3·from on the 24-point boards). Writing four
        // little-endian bytes in increasing `from` order is exact: the bytes past the chunk are
        // zero and belong to the next chunk, written later.
        //
        // The loop runs a fixed number of times (`pieces`, a constant at each call), so its
        // exit is never mispredicted; once the pieces run out, `trailing_zeros` gives 32, whose
        // table entry is empty and whose (zero) write lands past the last action.
        let targets = if flying { tables.fly } else { tables.slide };
        let mut bytes = [0u8; 8 * MASK_WORDS];
        let mut rest = self.pieces[me].0;
        for _ in 0..pieces {
            let from = rest.trailing_zeros() as usize;
            rest &= rest.wrapping_sub(1);
            let to = targets[from] & empty.0;
            let at = tables.chunk[from] as usize;
            bytes[at..at + 4].copy_from_slice(&to.to_le_bytes());
        }
        ActionMask::from_le_bytes(&bytes)
    }

    /// Checks that `action` is legal, without applying it.
    ///
    /// # Errors
    /// The reason the action is illegal; [`ActionError::GameOver`] if the position is terminal.
    pub fn check(&self, action: Action, rules: &Rules) -> Result<(), ActionError> {
        let board = rules.variant.board();
        if !action.is_in_range_on(board) {
            return Err(ActionError::OutOfRange(action));
        }
        if self.outcome(rules).is_terminal() {
            return Err(ActionError::GameOver);
        }
        let me = self.side;
        if self.removals > 0 {
            let Some(p) = action.as_point_on(board) else {
                return Err(ActionError::RemovalPending(action));
            };
            if !self.pieces(me.opponent()).has(p) {
                return Err(ActionError::NothingToRemove(p));
            }
            if !self.removable(rules).has(p) {
                return Err(ActionError::ProtectedPiece(p));
            }
            return Ok(());
        }
        if let Some(p) = action.as_point_on(board) {
            if self.in_hand(me) == 0 {
                return Err(ActionError::NoPiecesInHand(p));
            }
            if self.occupied().has(p) {
                return Err(ActionError::PointOccupied(p));
            }
            return Ok(());
        }
        let Some((from, to)) = action.as_movement_on(board) else {
            return Err(ActionError::OutOfRange(action));
        };
        if self.in_hand(me) > 0 && !rules.variant.slides_while_placing() {
            return Err(ActionError::MustPlace(action));
        }
        if !self.pieces(me).has(from) {
            return Err(ActionError::NotOwnPiece(from));
        }
        if self.occupied().has(to) {
            return Err(ActionError::PointOccupied(to));
        }
        if self.phase(me, rules) != Phase::Flying && !board.adjacent[from.index()].has(to) {
            return Err(ActionError::NotAdjacent { from, to });
        }
        Ok(())
    }

    /// Applies a legal action.
    ///
    /// # Errors
    /// If the action is illegal, the reason; the position is then unchanged.
    pub fn apply(&mut self, action: Action, rules: &Rules) -> Result<(), ActionError> {
        self.check(action, rules)?;
        self.apply_unchecked(action, rules);
        Ok(())
    }

    /// Applies an action known to be legal under `rules` (taken from
    /// [`Position::legal_actions`]): the fast path for search and playouts. An illegal action
    /// leaves a meaningless (but memory-safe) position; debug builds assert that the action is
    /// in range.
    #[inline(always)]
    pub fn apply_unchecked(&mut self, action: Action, rules: &Rules) {
        debug_assert!((action.0 as usize) < NUM_ACTIONS);
        let me = self.side.index();
        let opp = 1 - me;
        let i = action.0 as usize;
        if self.removals > 0 {
            if self.removals > 1 {
                self.first_of_two_removals(i);
                return;
            }
            let p = Point::from_index_unchecked(i);
            self.pieces[opp] ^= p.bit();
            self.hash ^= ZOBRIST.piece[opp][i] ^ ZOBRIST.removal_pending;
            self.removals = 0;
            self.quiet_plies = 0;
            self.pass_turn();
        } else if rules.variant.is_small_board() {
            self.place_or_move_on_small_board(i, rules);
        } else if i < NUM_POINTS {
            let p = Point::from_index_unchecked(i);
            self.pieces[me] |= p.bit();
            let h = self.in_hand[me] as usize;
            self.hash ^= ZOBRIST.piece[me][i] ^ ZOBRIST.in_hand[me][h] ^ ZOBRIST.in_hand[me][h - 1];
            self.in_hand[me] -= 1;
            self.finish_turn(p, rules);
        } else {
            let m = i - NUM_POINTS;
            let (from, to) = (m / NUM_POINTS, m % NUM_POINTS);
            self.pieces[me] ^= BitBoard((1 << from) | (1 << to));
            self.hash ^= ZOBRIST.piece[me][from] ^ ZOBRIST.piece[me][to];
            self.quiet_plies = self.quiet_plies.saturating_add(1);
            self.finish_turn(Point::from_index_unchecked(to), rules);
        }
    }

    /// A placement or move on a board of fewer than 24 points (six and three men's morris),
    /// whose actions are numbered on its own points: out of line, off the 24-point boards' path.
    #[cold]
    #[inline(never)]
    fn place_or_move_on_small_board(&mut self, i: usize, rules: &Rules) {
        let me = self.side.index();
        let board = rules.variant.board();
        let (n, s) = (board.num_points, board.move_stride());
        if i < n {
            let h = self.in_hand[me] as usize;
            self.pieces[me] |= BitBoard(1 << i);
            self.hash ^= ZOBRIST.piece[me][i] ^ ZOBRIST.in_hand[me][h] ^ ZOBRIST.in_hand[me][h - 1];
            self.in_hand[me] -= 1;
            self.finish_turn(Point::from_index_unchecked(i), rules);
        } else {
            let (from, to) = ((i - s) / s, (i - s) % s);
            self.pieces[me] ^= BitBoard((1 << from) | (1 << to));
            self.hash ^= ZOBRIST.piece[me][from] ^ ZOBRIST.piece[me][to];
            self.quiet_plies = self.quiet_plies.saturating_add(1);
            self.finish_turn(Point::from_index_unchecked(to), rules);
        }
    }

    /// After a piece arrives on `p`: start a removal if it closed a mill (two after
    /// morabaraba's double mill), else pass the turn. Branch-free where nine men's morris goes,
    /// because whether a random move closes a mill is unpredictable; nine's path is the code it
    /// had before variants, the others' mill count comes from an out-of-line call (by value).
    #[inline(always)]
    fn finish_turn(&mut self, p: Point, rules: &Rules) {
        let me = self.side.index();
        // With no opposing piece on the board there is nothing to remove, and the turn passes.
        let on_board = !self.pieces[1 - me].is_empty();
        let (removes, removals) = if rules.variant.is_nine() {
            let removes = NineSpec::closes_mill(self.pieces[me], p.index()) & on_board;
            (removes, removes as u8)
        } else {
            let earned = removals_earned_elsewhere(rules, self.pieces[me], p.index());
            let removes = (earned != 0) & on_board;
            if removes && earned > 1 {
                self.hash ^= ZOBRIST.second_removal;
            }
            (removes, earned * removes as u8)
        };
        let passes = !removes;
        let all = |b: bool| (b as u64).wrapping_neg();
        self.removals = removals;
        self.hash ^= (ZOBRIST.removal_pending & all(removes)) ^ (ZOBRIST.black_to_move & all(passes));
        self.side = if (me == 1) ^ passes { Color::Black } else { Color::White };
        self.turns = self.turns.saturating_add(passes as u16);
    }

    /// Morabaraba's first of two removals, of the piece on point `i`: the second follows, unless
    /// this one left nothing on the board to remove. Out of line, off nine's path.
    #[cold]
    #[inline(never)]
    fn first_of_two_removals(&mut self, i: usize) {
        let opp = 1 - self.side.index();
        self.pieces[opp] ^= Point::from_index_unchecked(i).bit();
        self.hash ^= ZOBRIST.piece[opp][i] ^ ZOBRIST.second_removal;
        self.removals = 1;
        self.quiet_plies = 0;
        if self.pieces[opp].is_empty() {
            self.hash ^= ZOBRIST.removal_pending;
            self.removals = 0;
            self.pass_turn();
        }
    }

    #[inline]
    fn pass_turn(&mut self) {
        self.side = self.side.opponent();
        self.hash ^= ZOBRIST.black_to_move;
        self.turns = self.turns.saturating_add(1);
    }

    // ----- notation ------------------------------------------------------------------------

    /// Reads `action` as a move in notation, taking the pending removal into account (the
    /// 24-point boards' encoding; [`Position::move_on`] reads any board's).
    pub const fn move_of(&self, action: Action) -> Option<Move> {
        Move::from_action(action, self.removals > 0)
    }

    /// Reads `action` as a move on `rules`' board, taking the pending removal into account.
    pub const fn move_on(&self, action: Action, rules: &Rules) -> Option<Move> {
        Move::from_action_on(action, self.removals > 0, rules.variant.board())
    }

    /// Parses notation (`d6`, `a1-a4`, `xg7`) into a legal action for this position.
    ///
    /// # Errors
    /// If the text is malformed, of the wrong kind (a removal is or is not pending), or illegal.
    pub fn parse_action(&self, text: &str, rules: &Rules) -> Result<Action, NotationError> {
        let board = rules.variant.board();
        let m = Move::parse_on(text, board)?;
        let t = text.trim().to_string();
        match (m, self.removals > 0) {
            (Move::Remove(_), false) => return Err(NotationError::UnexpectedRemoval(t)),
            (Move::Place(_) | Move::Slide { .. }, true) => return Err(NotationError::ExpectedRemoval(t)),
            _ => {}
        }
        let action = m.to_action_on(board);
        self.check(action, rules).map_err(|error| NotationError::Illegal {
            text: t,
            error,
            variant: rules.variant,
        })?;
        Ok(action)
    }
}

/// The removals a piece arriving on `p` earns for `pieces` (which hold it) under `rules` of a
/// variant other than nine men's morris (whose test is inline in `finish_turn`): 0 or 1, or in
/// morabaraba as many as the mills it closes, up to 2. Out of line and by value, so that the
/// position itself never goes through an out-of-line call.
#[cold]
#[inline(never)]
fn removals_earned_elsewhere(rules: &Rules, pieces: BitBoard, p: usize) -> u8 {
    with_spec!(rules.variant, S => S::removals_earned(pieces, p))
}

/// The points of `pieces` standing in a complete mill of `rules`' board (nine's inline).
#[inline(always)]
fn pieces_in_mills(rules: &Rules, pieces: BitBoard) -> BitBoard {
    #[cold]
    #[inline(never)]
    fn other(rules: &Rules, pieces: BitBoard) -> BitBoard {
        with_spec!(rules.variant, S => S::pieces_in_mills(pieces))
    }
    if rules.variant.is_nine() { NineSpec::pieces_in_mills(pieces) } else { other(rules, pieces) }
}

/// The points adjacent on `rules`' board to a point of `set` (nine's inline).
#[inline(always)]
fn neighbours(rules: &Rules, set: BitBoard) -> BitBoard {
    #[cold]
    #[inline(never)]
    fn other(rules: &Rules, set: BitBoard) -> BitBoard {
        with_spec!(rules.variant, S => S::neighbours(set))
    }
    if rules.variant.is_nine() { NineSpec::neighbours(set) } else { other(rules, set) }
}

impl Position {
    /// The position drawn on `rules`' board ([`fmt::Display`] draws it on nine's).
    pub fn display<'a>(&'a self, rules: &'a Rules) -> PositionOn<'a> {
        PositionOn { pos: self, board: rules.variant.board() }
    }
}

/// A [`Position`] drawn as text on a board ([`Position::display`]): the board with coordinates
/// (`W`, `B`, `.` for empty; the lines along ranks and files, and diagonal steps of one point),
/// then who moves and the hands.
#[derive(Clone, Copy, Debug)]
pub struct PositionOn<'a> {
    pos: &'a Position,
    board: &'a Board,
}

impl fmt::Display for PositionOn<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (board, pos) = (self.board, self.pos);
        // Every point sits at column `4·file + 2` and row `2·(grid − 1 − rank)`.
        let g = board.grid as usize;
        let col = |file: i8| 4 * file as usize + 2;
        let row = |rank: i8| 2 * (g - 1 - rank as usize);
        let mut rows: Vec<Vec<u8>> = vec![vec![b' '; 4 * (g - 1) + 3]; 2 * g - 1];
        for (a, b) in board.edges() {
            let ((fa, ra), (fb, rb)) = (board.coords[a as usize], board.coords[b as usize]);
            if ra == rb {
                rows[row(ra)][col(fa.min(fb)) + 1..col(fa.max(fb))].fill(b'-');
            } else if fa == fb {
                for r in &mut rows[row(ra.max(rb)) + 1..row(ra.min(rb))] {
                    r[col(fa)] = b'|';
                }
            } else if (fa - fb).abs() == 1 && (ra - rb).abs() == 1 {
                // A diagonal step (three men's morris, twelve's corners): one stroke between.
                let rising = (fa < fb) == (ra < rb);
                rows[row(ra.max(rb)) + 1][col(fa.min(fb)) + 2] = if rising { b'/' } else { b'\\' };
            }
        }
        for p in 0..board.num_points {
            let (file, rank) = board.coords[p];
            let cell = &mut rows[row(rank)][col(file)];
            *cell = b'.';
            for c in Color::ALL {
                if pos.pieces(c).0 & (1 << p) != 0 {
                    *cell = c.symbol() as u8;
                }
            }
        }
        for (i, r) in rows.iter_mut().enumerate() {
            if i % 2 == 0 {
                r[0] = b'0' + (g - i / 2) as u8;
            }
            writeln!(f, "{}", String::from_utf8_lossy(r).trim_end())?;
        }
        let files: Vec<String> = (0..g).map(|i| ((b'a' + i as u8) as char).to_string()).collect();
        writeln!(f, "  {}", files.join("   "))?;
        write!(
            f,
            "{} to {} | in hand: White {}, Black {} | turn {}",
            pos.side,
            if pos.removals > 0 { "remove" } else { "move" },
            pos.in_hand[0],
            pos.in_hand[1],
            pos.turns
        )
    }
}

impl fmt::Display for Position {
    /// The board of nine men's morris with coordinates (`W`, `B`, `.` for empty), then who
    /// moves and the hands ([`Position::display`] draws another variant's board).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        PositionOn { pos: self, board: &NINE }.fmt(f)
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Position")
            .field("white", &format_args!("{:#08x}", self.pieces[0].0))
            .field("black", &format_args!("{:#08x}", self.pieces[1].0))
            .field("in_hand", &self.in_hand)
            .field("side", &self.side)
            .field("removals", &self.removals)
            .field("quiet_plies", &self.quiet_plies)
            .field("turns", &self.turns)
            .finish()
    }
}
