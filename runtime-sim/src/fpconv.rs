//! Conversions between the small float formats (binary16, bfloat16) and
//! binary32/binary64, done on bit patterns so they are exact and portable.

/// binary16 → binary64 (exact).
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (h >> 10) & 0x1f;
    let man = (h & 0x3ff) as f64;
    match exp {
        0 => sign * man * 2f64.powi(-24),
        0x1f => {
            if man == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            }
        }
        e => sign * (1.0 + man / 1024.0) * 2f64.powi(e as i32 - 15),
    }
}

/// binary64 → binary16, rounding to nearest even; NaN becomes `nan`.
pub fn f64_to_f16(x: f64, nan: u16) -> u16 {
    if x.is_nan() {
        return nan;
    }
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    if a == 0.0 {
        return sign;
    }
    // Scale so that the result's unit in the last place is 1, then round.
    let (e, _) = frexp(a);
    // a = m * 2^e with m in [0.5, 1): normal binary16 exponent is e - 1.
    let unbiased = e - 1;
    let ulp_exp = if unbiased < -14 { -24 } else { unbiased - 10 };
    let q = round_half_even(a / 2f64.powi(ulp_exp));
    let v = q * 2f64.powi(ulp_exp);
    if v >= 65520.0 || (v > 65504.0) {
        return sign | 0x7c00;
    }
    if v == 0.0 {
        return sign;
    }
    let (e2, _) = frexp(v);
    let ub = e2 - 1;
    if ub < -14 {
        // Subnormal: v = q * 2^-24.
        return sign | (v / 2f64.powi(-24)) as u16;
    }
    let man = ((v / 2f64.powi(ub) - 1.0) * 1024.0) as u16;
    sign | (((ub + 15) as u16) << 10) | man
}

/// bfloat16 → binary64 (exact).
pub fn bf16_to_f64(h: u16) -> f64 {
    f32::from_bits((h as u32) << 16) as f64
}

/// binary64 → bfloat16, rounding to nearest even; NaN becomes `nan`.
pub fn f64_to_bf16(x: f64, nan: u16) -> u16 {
    if x.is_nan() {
        return nan;
    }
    // Round to binary32 first only if exact; otherwise round directly on the
    // binary64 value to avoid double rounding.
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a.is_infinite() {
        return sign | 0x7f80;
    }
    if a == 0.0 {
        return sign;
    }
    let (e, _) = frexp(a);
    let unbiased = e - 1;
    let ulp_exp = if unbiased < -126 { -133 } else { unbiased - 7 };
    let q = round_half_even(a / 2f64.powi(ulp_exp));
    let v = q * 2f64.powi(ulp_exp);
    let bits = (v as f32).to_bits();
    if v > f32::MAX as f64 {
        return sign | 0x7f80;
    }
    sign | (bits >> 16) as u16
}

/// Splits `a > 0` into (e, m) with a = m · 2^e and m in [0.5, 1).
fn frexp(a: f64) -> (i32, f64) {
    let bits = a.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        let (e, m) = frexp(a * 2f64.powi(64));
        return (e - 64, m);
    }
    let e = exp - 1022;
    (e, a / 2f64.powi(e))
}

fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trip_of_known_values() {
        assert_eq!(f64_to_f16(1.0, 0x7fff), 0x3c00);
        assert_eq!(f64_to_f16(-2.0, 0x7fff), 0xc000);
        assert_eq!(f64_to_f16(65504.0, 0x7fff), 0x7bff);
        assert_eq!(f64_to_f16(65520.0, 0x7fff), 0x7c00);
        assert_eq!(f64_to_f16(2f64.powi(-24), 0x7fff), 0x0001);
        assert_eq!(f64_to_f16(0.5, 0x7fff), 0x3800);
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert_eq!(f16_to_f64(0x7bff), 65504.0);
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even wins.
        assert_eq!(f64_to_f16(1.0 + 2f64.powi(-11), 0x7fff), 0x3c00);
        assert_eq!(f64_to_bf16(1.0, 0x7fff), 0x3f80);
        assert_eq!(f64_to_bf16(1.0 + 2f64.powi(-8), 0x7fff), 0x3f80);
        assert_eq!(f64_to_bf16(1.0 + 3.0 * 2f64.powi(-8), 0x7fff), 0x3f82);
        assert_eq!(bf16_to_f64(0xbf80), -1.0);
    }
}
