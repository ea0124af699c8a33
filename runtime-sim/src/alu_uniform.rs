//! Uniform-datapath specifics and register-file transfers: R2UR, the
//! dynamically indexed SETGPR/GETGPR/SETUGPR/GETUGPR (E72), ULDC (E68–E70)
//! and the special registers (S2R/S2UR). The arithmetic twins of the uniform
//! datapath (UIADD, ULOP3, ...) share alu_int.rs.

use crate::machine::{lanes, Warp};
use crate::memory::{le_load, ConstBanks};
use crate::ops::{Dst, Op};
use crate::regs::{Regs, UR_ZERO, ZERO_ROW};
use crate::site::Site;
use crate::trap::{Fault, Space, TrapKind};

/// A dynamic register index `base + off`, checked against the file.
fn index(base: u32, off: i32, zero: i64, file: &'static str) -> Result<usize, TrapKind> {
    let i = base as i64 + off as i64;
    if i < 0 || i > zero {
        Err(TrapKind::RegisterIndex { file, index: i })
    } else {
        Ok(i as usize)
    }
}

pub(crate) fn exec(op: &Op, rf: &mut Regs, cb: &ConstBanks, e: u32) -> Result<(), Fault> {
    if e == 0 {
        return Ok(());
    }
    let lane0 = e.trailing_zeros() as usize;
    match *op {
        Op::R2ur { d, b } => {
            // The lowest active lane whose guard is true provides the value.
            rf.ur[d as usize] = rf.r[b as usize][lane0];
        }
        Op::Setgpr { idx, off, a } => {
            let i = index(rf.ur[idx as usize], off, ZERO_ROW as i64, "R").map_err(|k| Fault::at(k, lane0))?;
            let v = rf.get::<32>(a, cb)?;
            if i != ZERO_ROW as usize {
                rf.put::<32>(Dst::R(i as u16), &v, e);
            }
        }
        Op::Getgpr { d, idx, off } => {
            let i = index(rf.ur[idx as usize], off, ZERO_ROW as i64, "R").map_err(|k| Fault::at(k, lane0))?;
            let v = rf.r[i];
            rf.put::<32>(d, &v, e);
        }
        Op::Setugpr { idx, off, b } => {
            let i = index(rf.ur[idx as usize], off, UR_ZERO as i64, "UR")?;
            let v = rf.get::<1>(b, cb)?;
            if i != UR_ZERO as usize {
                rf.ur[i] = v[0];
            }
        }
        Op::Getugpr { d, idx, off } => {
            let i = index(rf.ur[idx as usize], off, UR_ZERO as i64, "UR")?;
            let v = [rf.ur[i]];
            rf.put::<1>(d, &v, 1);
        }
        Op::Uldc { d, bank, off, base, ty } => {
            let addr = (rf.ur[base as usize] as i64 + off as i64) as u64;
            let n = ty.bytes();
            if addr > 0xffff {
                return Err(TrapKind::OutOfBounds { space: Space::Constant, addr: (bank as u64) << 16 | (addr & 0xffff), size: n }.into());
            }
            if !addr.is_multiple_of(n as u64) {
                return Err(TrapKind::Misaligned { space: Space::Constant, addr: (bank as u64) << 16 | addr, size: n }.into());
            }
            let bytes = cb.read(bank, addr, n)?;
            let mut words = [0u32; 4];
            if n < 4 {
                words[0] = ty.extend(le_load(bytes));
            } else {
                for (k, w) in words.iter_mut().enumerate().take(n as usize / 4) {
                    *w = le_load(&bytes[4 * k..4 * k + 4]) as u32;
                }
            }
            for (k, slot) in d.iter().enumerate().take(ty.regs()) {
                rf.ur[*slot as usize] = words[k];
            }
        }
        _ => unreachable!("not a transfer op: {:?}", op),
    }
    Ok(())
}

/// S2R / S2UR: special registers (isa-extensions 6.17).
pub(crate) fn s2r(warp: &mut Warp, site: &Site, d: Dst, sr: u8, e: u32, uniform: bool) -> Result<(), Fault> {
    if e == 0 {
        return Ok(());
    }
    let [nx, ny, _] = site.block;
    let warp_id = warp.id;
    let value = |l: usize| -> u32 {
        let t = warp_id * 32 + l as u32;
        match sr {
            0x00 => l as u32,
            0x01 => warp_id,
            0x21 => t % nx,
            0x22 => (t / nx) % ny,
            0x23 => t / (nx * ny),
            0x25..=0x27 => site.cta[(sr - 0x25) as usize],
            0x29..=0x2B => site.block[(sr - 0x29) as usize],
            0x2D..=0x2F => site.grid[(sr - 0x2D) as usize],
            0x50 => site.clock as u32,
            0x51 => (site.clock >> 32) as u32,
            _ => 0,
        }
    };
    if uniform {
        let v = [value(e.trailing_zeros() as usize)];
        warp.regs.put::<1>(d, &v, 1);
    } else {
        let mut v = [0u32; 32];
        for l in lanes(e) {
            v[l] = value(l);
        }
        warp.regs.put::<32>(d, &v, e);
    }
    Ok(())
}
