.kernel div64
    .param a, 8
    .param b, 8
    .param out, 8
    .param n, 4
    S2R R0, SR_TID_X ;
    S2R R1, SR_CTAID_X ;
    IMAD R0, R1, c[0x0][0x0], R0 ;
    ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x178], PT ;
    @P0 EXIT ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    MOV.64 R[4:5], c[0x0][0x168] ;
    MOV.64 R[6:7], c[0x0][0x170] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x8, R[2:3] ;
    IMAD.WIDE.U32 R[4:5], R0, 0x8, R[4:5] ;
    IMAD.WIDE.U32 R[6:7], R0, 0x8, R[6:7] ;
    LDG.64 R[8:9], [R[2:3]] ;
    LDG.64 R[10:11], [R[4:5]] ;
    // fast path: a = R[8:9], b = R[10:11] -> R[12:13]
    MUFU.RCP.F64 R15, R11 ;
    MOV R14, 0x1 ;
    DFMA R[16:17], -R[10:11], R[14:15], 1 ;
    DFMA R[16:17], R[16:17], R[16:17], R[16:17] ;
    DFMA R[14:15], R[14:15], R[16:17], R[14:15] ;
    DFMA R[16:17], -R[10:11], R[14:15], 1 ;
    DFMA R[14:15], R[14:15], R[16:17], R[14:15] ;
    DMUL R[16:17], R[8:9], R[14:15] ;
    DFMA R[18:19], -R[10:11], R[16:17], R[8:9] ;
    DFMA R[12:13], R[14:15], R[18:19], R[16:17] ;
    FSETP.GE.AND P0, PT, |R9|, 0x03800000, PT ;
    FSETP.GE.AND P0, PT, |R11|, 0x00100000, P0 ;
    FSETP.LT.AND P0, PT, |R11|, +INF, P0 ;
    FSETP.GE.AND P0, PT, |R13|, 0x00100000, P0 ;
    // slow path, special operands: a * (b finite nonzero ? b : 1/b)
    DSETP.GT.AND P1, PT, |R[10:11]|, 0, !P0 ;
    DSETP.LT.AND P1, PT, |R[10:11]|, +INF, P1 ;
    DSETP.GT.AND P2, PT, |R[8:9]|, 0, P1 ;
    DSETP.LT.AND P2, PT, |R[8:9]|, +INF, P2 ;
    @!P0 MUFU.RCP.F64 R21, R11 ;
    @!P0 MOV R20, RZ ;
    @!P0 SEL R20, R10, R20, P1 ;
    @!P0 SEL R21, R11, R21, P1 ;
    @!P0 DMUL R[12:13], R[8:9], R[20:21] ;
    DSETP.NAN.AND P3, PT, R[12:13], R[10:11], !P0 ;
    @P3 MOV R12, RZ ;
    @P3 MOV R13, 0x7ff80000 ;
    // slow path, finite nonzero operands: m_a / m_b in [1,2), exponents apart
    @P2 LOP3.LUT R21, R9, 0x7fffffff, RZ, 0xc0, !PT ;
    @P2 MOV R20, R8 ;
    ISETP.LT.U32.AND P3, PT, R21, 0x00100000, P2 ;
    @P3 DMUL R[20:21], R[20:21], 1.8014398509481984e16 ;
    @P2 SHF.R.U32 R24, R21, 0x14, RZ ;
    @P3 IADD R24, R24, -0x36 ;
    @P2 LOP3.LUT R21, R21, 0x000fffff, RZ, 0xc0, !PT ;
    @P2 IADD R21, R21, 0x3ff00000 ;
    @P2 LOP3.LUT R23, R11, 0x7fffffff, RZ, 0xc0, !PT ;
    @P2 MOV R22, R10 ;
    ISETP.LT.U32.AND P3, PT, R23, 0x00100000, P2 ;
    @P3 DMUL R[22:23], R[22:23], 1.8014398509481984e16 ;
    @P2 SHF.R.U32 R25, R23, 0x14, RZ ;
    @P3 IADD R25, R25, -0x36 ;
    @P2 LOP3.LUT R23, R23, 0x000fffff, RZ, 0xc0, !PT ;
    @P2 IADD R23, R23, 0x3ff00000 ;
    @P2 IADD R24, R24, -R25 ;
    @P2 MUFU.RCP.F64 R15, R23 ;
    @P2 MOV R14, 0x1 ;
    @P2 DFMA R[16:17], -R[22:23], R[14:15], 1 ;
    @P2 DFMA R[16:17], R[16:17], R[16:17], R[16:17] ;
    @P2 DFMA R[14:15], R[14:15], R[16:17], R[14:15] ;
    @P2 DFMA R[16:17], -R[22:23], R[14:15], 1 ;
    @P2 DFMA R[14:15], R[14:15], R[16:17], R[14:15] ;
    @P2 DMUL R[16:17], R[20:21], R[14:15] ;
    @P2 DFMA R[18:19], -R[22:23], R[16:17], R[20:21] ;
    @P2 DFMA R[26:27], R[14:15], R[18:19], R[16:17] ;
    @P2 DFMA R[18:19], -R[22:23], R[26:27], R[20:21] ;
    // result exponent field = exponent field of q' + e; below 1: subnormal zone
    @P2 SHF.R.U32 R28, R27, 0x14, RZ ;
    @P2 IADD R28, R28, R24 ;
    @P2 IMNMX R24, R24, -0x47e, !PT ;
    @P2 IMNMX R24, R24, 0x44c, PT ;
    ISETP.LT.AND P4, PT, R28, 0x1, P2 ;
    // subnormal zone: t = q' * 2^(1074+e) counts units of 2^-1074; a tie t = n + 1/2
    // is decided by the sign of the remainder r' = m_a - m_b q'
    @P4 LEA R29, R24, 0x83100000, 0x14 ;
    @P4 MOV R28, RZ ;
    @P4 DMUL R[28:29], R[26:27], R[28:29] ;
    @P4 FRND.F64.RM R[16:17], R[28:29] ;
    @P4 DADD R[14:15], R[28:29], -R[16:17] ;
    DSETP.EQ.AND P3, PT, R[14:15], 0.5, P4 ;
    DSETP.GT.AND P5, PT, R[18:19], 0, P3 ;
    DSETP.LT.AND P6, PT, R[18:19], 0, P3 ;
    @P5 DADD R[28:29], R[16:17], 1 ;
    @P6 DADD R[28:29], R[16:17], RZ ;
    @P4 MOV R14, 0x1 ;
    @P4 MOV R15, RZ ;
    @P4 DMUL R[12:13], R[28:29], R[14:15] ;
    // normal zone: q' * 2^e1 * 2^e2, exact unless it overflows
    PLOP3 P3, P2, !P4, PT, 0x80 ;
    @P3 SHF.R.S32.HI R25, RZ, 0x1, R24 ;
    @P3 IADD R24, R24, -R25 ;
    @P3 LEA R29, R25, 0x3ff00000, 0x14 ;
    @P3 MOV R28, RZ ;
    @P3 DMUL R[26:27], R[26:27], R[28:29] ;
    @P3 LEA R29, R24, 0x3ff00000, 0x14 ;
    @P3 DMUL R[12:13], R[26:27], R[28:29] ;
    @P2 LOP3.LUT R28, R9, R11, RZ, 0x3c, !PT ;
    @P2 LOP3.LUT R13, R28, 0x80000000, R13, 0x6a, !PT ;
    STG.64 [R[6:7]], R[12:13] ;
    EXIT ;
