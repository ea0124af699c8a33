.kernel sqrt32
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
    MOV.64 R[6:7], c[0x0][0x170] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
    IMAD.WIDE.U32 R[6:7], R0, 0x4, R[6:7] ;
    LDG R8, [R[2:3]] ;
    F2F.F64.F32 R[10:11], R8 ;
    MUFU.RSQ.F64 R13, R11 ;
    MOV R12, 0x1 ;
    DMUL R[14:15], R[10:11], R[12:13] ;
    DMUL R[12:13], R[12:13], 0.5 ;
    DFMA R[16:17], -R[14:15], R[12:13], 0.5 ;
    DFMA R[14:15], R[14:15], R[16:17], R[14:15] ;
    DFMA R[12:13], R[12:13], R[16:17], R[12:13] ;
    DFMA R[16:17], -R[14:15], R[14:15], R[10:11] ;
    DFMA R[14:15], R[16:17], R[12:13], R[14:15] ;
    F2F.F32.F64 R20, R[14:15] ;
    FSETP.GT.AND P0, PT, R8, 0, PT ;
    FSETP.LT.AND P0, PT, R8, +INF, P0 ;
    @!P0 MOV R20, R8 ;
    FSETP.LTU.AND P1, PT, R8, 0, !P0 ;
    @P1 MOV R20, 0x7fc00000 ;
    STG [R[6:7]], R20 ;
    EXIT ;
