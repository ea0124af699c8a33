// y[i] = a * x[i] + y[i] over 32-bit integers, written with the vendor ALU
// instructions only (no memory access): R0 = a, R1 = x, R2 = y.
.kernel axpy
    IMAD R3, R0, R1, R2 ;
    IMAD.WIDE.U32 R[4:5], R0, 0x10, R[6:7] ;
    ISETP.GE.AND P0, PT, R3, 0x100, PT ;
    @P0 IADD R3, R3, -0x100 ;
    SHF.L.U32 R8, R3, 0x4, RZ ;
    LOP3.PAND P1, R9, R8, R1, R2, 0x96, !PT ;
