// out[i] = a[i] + b[i] for i < n, one thread per element.
.kernel vadd
    .param a, ptr
    .param b, ptr
    .param out, ptr
    .param n, i32
    S2R R0, SR_TID_X ;
    S2R R1, SR_CTAID_X ;
    IMAD R0, R1, c[0x0][0x0], R0 ;              // i = ctaid.x * ntid.x + tid.x
    ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x178], PT ;
    @P0 EXIT ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    MOV.64 R[4:5], c[0x0][0x168] ;
    MOV.64 R[6:7], c[0x0][0x170] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;     // &a[i]
    IMAD.WIDE.U32 R[4:5], R0, 0x4, R[4:5] ;     // &b[i]
    IMAD.WIDE.U32 R[6:7], R0, 0x4, R[6:7] ;     // &out[i]
    LDG R8, [R[2:3]] ;
    LDG R9, [R[4:5]] ;
    IADD R8, R8, R9 ;
    STG [R[6:7]], R8 ;
    EXIT ;
