.kernel div32
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
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
    IMAD.WIDE.U32 R[4:5], R0, 0x4, R[4:5] ;
    IMAD.WIDE.U32 R[6:7], R0, 0x4, R[6:7] ;
    LDG R8, [R[2:3]] ;
    LDG R9, [R[4:5]] ;
    F2F.F64.F32 R[10:11], R8 ;
    F2F.F64.F32 R[12:13], R9 ;
    MUFU.RCP.F64 R15, R13 ;
    MOV R14, RZ ;
    DFMA R[16:17], -R[12:13], R[14:15], 1 ;
    DFMA R[16:17], R[16:17], R[16:17], R[16:17] ;
    DFMA R[14:15], R[14:15], R[16:17], R[14:15] ;
    DMUL R[16:17], R[10:11], R[14:15] ;
    DFMA R[18:19], -R[12:13], R[16:17], R[10:11] ;
    DFMA R[16:17], R[14:15], R[18:19], R[16:17] ;
    F2F.F32.F64 R20, R[16:17] ;
    FSETP.GT.AND P1, PT, |R9|, 0, PT ;
    FSETP.LT.AND P1, PT, |R9|, +INF, P1 ;
    FSETP.GT.AND P0, PT, |R8|, 0, P1 ;
    FSETP.LT.AND P0, PT, |R8|, +INF, P0 ;
    @!P0 MUFU.RCP R21, R9 ;
    @!P0 SEL R21, R9, R21, P1 ;
    @!P0 FMUL R20, R8, R21 ;
    FSETP.NAN.AND P2, PT, R20, R20, PT ;
    @P2 MOV R20, 0x7fc00000 ;
    STG [R[6:7]], R20 ;
    EXIT ;
