//! The 16 symmetries (nine's board and six's): a group, preserving adjacency and mills, and
//! commuting with the rules and the observation.

use morris_env::board::Board;
use morris_env::features::encode;
use morris_env::{
    Action, BitBoard, Color, NUM_ACTIONS, NUM_SYMMETRIES, Point, Position, Rules, Symmetry, Variant,
    obs_len_on,
};
use proptest::prelude::*;

use super::config;
use super::games::*;
use super::reference::*;

pub(crate) fn map_board(board: &Board, s: Symmetry, b: BitBoard) -> BitBoard {
    let mut out = 0u32;
    for p in 0..board.num_points {
        if has(b.0, p) {
            out |= 1 << s.point_on(board, Point::try_index(p).unwrap()).index();
        }
    }
    BitBoard(out)
}

/// The image of action `a` of `board` (`0..n` points, `w + w·from + to` moves, `w` being `n`
/// rounded up to a multiple of 8 as rules.md numbers them), decoded here. Indices that are no
/// action map to themselves.
pub(crate) fn map_action(board: &Board, s: Symmetry, a: usize) -> usize {
    let perm = &board.symmetries[s.index()];
    let n = board.num_points;
    let w = n.div_ceil(8) * 8;
    if a < n {
        perm[a] as usize
    } else if a < w || (a - w) % w >= n {
        a
    } else {
        let (from, to) = ((a - w) / w, (a - w) % w);
        w + perm[from] as usize * w + perm[to] as usize
    }
}

/// Property 4: symmetries commute with move generation, outcomes and observations, on the
/// board of `rules`' variant.
pub(crate) fn check_symmetries_on(pos: &Position, rules: &Rules) {
    let board = rules.variant.board();
    let (len, actions) = (obs_len_on(board), board.num_actions());
    let mask = pos.legal_actions_unchecked(rules);
    let mut obs = vec![0.0f32; len];
    encode(pos, rules, 1, &mut obs);
    let policy: Vec<f32> = (0..actions).map(|a| a as f32).collect();
    assert_eq!(Symmetry::all_on(board).count(), board.num_symmetries);
    for s in Symmetry::all_on(board) {
        let t = s.position_on(board, pos);
        for c in Color::ALL {
            assert_eq!(
                t.pieces(c),
                map_board(board, s, pos.pieces(c)),
                "{s:?} maps the board wrongly\n{pos}"
            );
            assert_eq!(t.in_hand(c), pos.in_hand(c));
        }
        assert_eq!(t.current_player(), pos.current_player());
        assert_eq!(t.is_removal_pending(), pos.is_removal_pending());
        assert_eq!((t.turns(), t.quiet_plies()), (pos.turns(), pos.quiet_plies()));
        assert_eq!(t.hash(), t.compute_hash());

        // Legal set of the image == image of the legal set.
        let mapped = s.mask_on(board, &mask);
        assert_eq!(t.legal_actions_unchecked(rules), mapped, "{s:?}: legal sets do not commute\n{pos}");
        let by_hand: Vec<usize> = {
            let mut v: Vec<usize> = mask.iter().map(|a| map_action(board, s, a.index())).collect();
            v.sort_unstable();
            v
        };
        assert_eq!(mapped.iter().map(|a| a.index()).collect::<Vec<_>>(), by_hand);
        assert_eq!(t.legal_actions(rules), s.mask_on(board, &pos.legal_actions(rules)));
        assert_eq!(t.outcome(rules), pos.outcome(rules));

        // Observations commute.
        let mut obs_t = vec![0.0f32; len];
        encode(&t, rules, 1, &mut obs_t);
        let mut obs_mapped = vec![f32::NAN; len];
        s.observation_on(board, &obs, &mut obs_mapped);
        assert_eq!(obs_t, obs_mapped, "{s:?}: observations do not commute\n{pos}");

        // Policies move with their actions.
        let mut out = vec![f32::NAN; actions];
        s.policy_on(board, &policy, &mut out);
        for a in 0..actions {
            assert_eq!(out[map_action(board, s, a)], a as f32);
        }
    }
}

#[test]
fn symmetries_preserve_reference_adjacency_and_mills() {
    assert_eq!(Symmetry::all().count(), NUM_SYMMETRIES);
    for s in Symmetry::all() {
        let perm = s.permutation();
        let mut seen = [false; 24];
        for &q in perm {
            seen[q as usize] = true;
        }
        assert!(seen.iter().all(|&x| x), "{s:?} is not a permutation");
        for a in 0..24 {
            for b in 0..24 {
                assert_eq!(ref_adjacent(a, b), ref_adjacent(perm[a] as usize, perm[b] as usize), "{s:?}");
            }
        }
        for m in REF_MILLS {
            let mut image: Vec<usize> = m.iter().map(|&p| perm[p] as usize).collect();
            image.sort_unstable();
            assert!(
                REF_MILLS.iter().any(|n| {
                    let mut n = n.to_vec();
                    n.sort_unstable();
                    n == image
                }),
                "{s:?} breaks mill {m:?}"
            );
        }
    }
    for a in Symmetry::all() {
        for b in Symmetry::all() {
            if a < b {
                assert_ne!(a.permutation(), b.permutation(), "{a:?} and {b:?} coincide");
            }
        }
    }
    assert_eq!(Symmetry::IDENTITY.permutation(), &std::array::from_fn::<u8, 24, _>(|i| i as u8));
}

/// Six men's morris's 16 symmetries keep the reference's 20 lines and 8 mills.
#[test]
fn six_symmetries_preserve_reference_lines_and_mills() {
    let board = Variant::Six.board();
    assert_eq!(board.num_symmetries, 16);
    let sorted = |m: &[usize]| {
        let mut v = m.to_vec();
        v.sort_unstable();
        v
    };
    for s in Symmetry::all_on(board) {
        let perm = &board.symmetries[s.index()];
        for a in 0..16 {
            for b in 0..16 {
                let six = Geometry::Six;
                assert_eq!(six.adjacent(a, b), six.adjacent(perm[a] as usize, perm[b] as usize), "{s:?}");
            }
        }
        for m in REF_SIX_MILLS {
            let image: Vec<usize> = m.iter().map(|&p| perm[p] as usize).collect();
            assert!(REF_SIX_MILLS.iter().any(|n| sorted(n) == sorted(&image)), "{s:?} breaks mill {m:?}");
        }
        // Each has an inverse on the board, which undoes it on every point and action.
        let inv = s.inverse_on(board);
        for p in (0..16).filter_map(Point::try_index) {
            assert_eq!(inv.point_on(board, s.point_on(board, p)), p, "{s:?}");
        }
        for a in 0..board.num_actions() as u16 {
            assert_eq!(inv.action_on(board, s.action_on(board, Action(a))), Action(a), "{s:?}");
        }
    }
    for s in Symmetry::all() {
        assert_eq!(s.inverse_on(Variant::Nine.board()), s.inverse());
    }
}

#[test]
fn symmetry_group_is_closed_with_inverses() {
    for a in Symmetry::all() {
        for b in Symmetry::all() {
            let c = a.compose(b);
            assert!(c.index() < NUM_SYMMETRIES);
            for p in Point::ALL {
                assert_eq!(c.point(p), a.point(b.point(p)), "{a:?}∘{b:?} is not the composed map");
            }
            for x in 0..NUM_ACTIONS as u16 {
                assert_eq!(c.action(Action(x)), a.action(b.action(Action(x))));
            }
        }
        let inv = a.inverse();
        assert_eq!(a.compose(inv), Symmetry::IDENTITY, "{a:?}");
        assert_eq!(inv.compose(a), Symmetry::IDENTITY, "{a:?}");
        for p in Point::ALL {
            assert_eq!(inv.point(a.point(p)), p);
        }
        // Out-of-range actions map to themselves.
        assert_eq!(a.action(Action(600)), Action(600));
        assert_eq!(a.action(Action(u16::MAX)), Action(u16::MAX));
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// 4. Symmetries commute with the legal set, outcome and observation of random positions.
    #[test]
    fn symmetries_commute_with_rules_and_features(seed in any::<u64>(), plies in 0usize..400, rules in 0u8..RULE_SETS) {
        let rules = rules_of(rules);
        check_symmetries_on(&random_position(rules, seed, plies), &rules);
    }
}
