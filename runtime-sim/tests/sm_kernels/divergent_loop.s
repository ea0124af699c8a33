// examples/kernels/divergent_loop.clif compiled by `ursa compile --kernel` at 3fc04d4 and disassembled:
// fixed code for tests/sm_pinned.rs (the simulator's figures, not the compiler's).
.kernel divergent_loop
    .param v0, 8
    .param v1, 8
    .param v2, 4
    S2R R0, SR_TID_X &stall=1 &wsb=0 ;                           // 0000
    S2R R1, SR_CTAID_X &stall=1 &wsb=0 ;                         // 0010
    IMAD R1, R1, c[0x0][0x0], R0 &stall=5 &req=1 ;               // 0020
    ISETP.LT.AND P0, R1, c[0x0][0x170], PT &stall=4 ;            // 0030
    @P0 BRA .L_60 &stall=1 ;                                     // 0040
    EXIT &stall=1 ;                                              // 0050
.L_60:
    BSSY B0, .L_110 &stall=1 ;                                   // 0060
    MOV R2, 0x4 &stall=1 ;                                       // 0070
    LOP3 R0, R0, 0x7, RZ, 0xc0, !PT &stall=1 ;                   // 0080
    MOV R3, 0x0 &stall=2 ;                                       // 0090
    IMAD.WIDE R[4:5], R1, R2, c[0x0][0x168] &stall=5 ;           // 00a0
    LDG R2, [R[4:5]] &stall=1 &wsb=0 ;                           // 00b0
    LOP3 R4, R2, 0xf, RZ, 0xc0, !PT &stall=4 &req=1 ;            // 00c0
    IADD R0, R4, R0 &stall=1 ;                                   // 00d0
    MOV R4, R3 &stall=4 ;                                        // 00e0
.L_f0:
    ISETP.LT.AND.U32 P0, R3, R0, PT &stall=4 ;                   // 00f0
    @P0 BRA .L_170 &stall=1 ;                                    // 0100
.L_110:
    BSYNC B0 &stall=1 ;                                          // 0110
    MOV R0, 0x4 &stall=1 ;                                       // 0120
    IMAD R2, R4, 0x3, R1 &stall=3 ;                              // 0130
    IMAD.WIDE R[0:1], R1, R0, c[0x0][0x160] &stall=5 ;           // 0140
    STG [R[0:1]], R2 &stall=1 ;                                  // 0150
    EXIT &stall=1 ;                                              // 0160
.L_170:
    IMAD R5, R3, R2, R1 &stall=1 ;                               // 0170
    IADD R3, R3, 0x1 &stall=4 ;                                  // 0180
    IADD R4, R4, R5 &stall=4 ;                                   // 0190
    BRA .L_f0 &stall=1 &yield=1 ;                                // 01a0
