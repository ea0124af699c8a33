//! Warp collectives: VOTE and SHFL over the executing lanes
//! (docs/isa-extensions.md, 6.27 and 6.28).

use crate::machine::lanes;
use crate::memory::ConstBanks;
use crate::ops::{Op, ShflMode, VoteMode};
use crate::regs::Regs;
use crate::trap::Fault;

pub(crate) fn exec(op: &Op, rf: &mut Regs, cb: &ConstBanks, e: u32) -> Result<(), Fault> {
    match *op {
        Op::Vote { d, pu, pp, mode } => {
            let ballot = rf.pin::<32>(pp) & e;
            let all = ballot == e;
            let any = ballot != 0;
            let r = match mode {
                VoteMode::All => all,
                VoteMode::Any => any,
                VoteMode::Eq => all || !any,
            };
            rf.put::<32>(d, &[ballot; 32], e);
            rf.pout::<32>(pu, if r { u32::MAX } else { 0 }, e);
        }
        Op::Shfl { d, a, b, c, mode, pu } => {
            let (va, vb) = (rf.get::<32>(a, cb)?, rf.get::<32>(b, cb)?);
            let clamp = c & 0x1f;
            let segmask = (c >> 8) & 0x1f;
            let mut out = va;
            let mut ok_mask = 0u32;
            for l in lanes(e) {
                let l32 = l as i64;
                let bval = (vb[l] & 0x1f) as i64;
                let max_lane = ((l as u32 & segmask) | (clamp & !segmask)) as i64;
                let min_lane = (l as u32 & segmask) as i64;
                let (j, ok) = match mode {
                    ShflMode::Idx => {
                        let j = min_lane | (bval & !(segmask as i64));
                        (j, j <= max_lane)
                    }
                    ShflMode::Up => {
                        let j = l32 - bval;
                        (j, j >= max_lane)
                    }
                    ShflMode::Down => {
                        let j = l32 + bval;
                        (j, j <= max_lane)
                    }
                    ShflMode::Bfly => {
                        let j = l32 ^ bval;
                        (j, j <= max_lane)
                    }
                };
                if ok && (0..32).contains(&j) && e >> j & 1 != 0 {
                    out[l] = va[j as usize];
                    ok_mask |= 1 << l;
                }
            }
            rf.put::<32>(d, &out, e);
            rf.pout::<32>(pu, ok_mask, e);
        }
        _ => unreachable!("not a collective op: {:?}", op),
    }
    Ok(())
}
