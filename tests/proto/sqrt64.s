.kernel sqrt64
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
    IMAD.WIDE.U32 R[2:3], R0, 0x8, R[2:3] ;
    IMAD.WIDE.U32 R[6:7], R0, 0x8, R[6:7] ;
    LDG.64 R[8:9], [R[2:3]] ;
    // small positive a (below 2^-800, subnormals included): a * 2^1000, result * 2^-500
    FSETP.LT.AND P1, PT, R9, 0x0e000000, PT ;
    MOV R10, R8 ;
    MOV R11, R9 ;
    @P1 DMUL R[10:11], R[8:9], 1.0715086071862673e301 ;
    MUFU.RSQ.F64 R13, R11 ;
    MOV R12, 0x1 ;
    DMUL R[14:15], R[10:11], R[12:13] ;
    DMUL R[12:13], R[12:13], 0.5 ;
    DFMA R[16:17], -R[14:15], R[12:13], 0.5 ;
    DFMA R[14:15], R[14:15], R[16:17], R[14:15] ;
    DFMA R[12:13], R[12:13], R[16:17], R[12:13] ;
    DFMA R[16:17], -R[14:15], R[12:13], 0.5 ;
    DFMA R[14:15], R[14:15], R[16:17], R[14:15] ;
    DFMA R[12:13], R[12:13], R[16:17], R[12:13] ;
    DFMA R[16:17], -R[14:15], R[14:15], R[10:11] ;
    DFMA R[18:19], R[16:17], R[12:13], R[14:15] ;
    @P1 DMUL R[18:19], R[18:19], 3.054936363499605e-151 ;
    // zero, negative, infinite, NaN operands
    DSETP.GT.AND P0, PT, R[8:9], 0, PT ;
    DSETP.LT.AND P0, PT, R[8:9], +INF, P0 ;
    @!P0 MOV R18, R8 ;
    @!P0 MOV R19, R9 ;
    DSETP.LTU.AND P2, PT, R[8:9], 0, !P0 ;
    @P2 MOV R18, RZ ;
    @P2 MOV R19, 0x7ff80000 ;
    STG.64 [R[6:7]], R[18:19] ;
    EXIT ;
