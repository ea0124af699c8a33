// examples/kernels/sum_i64_loop.clif compiled by `ursa compile --kernel` at 3fc04d4 and disassembled:
// fixed code for tests/sm_pinned.rs (the simulator's figures, not the compiler's).
.kernel sum_i64_loop
    .param v0, 8
    .param v1, 8
    .param v2, 4
    .param v3, 4
    S2R R0, SR_TID_X &stall=1 &wsb=0 ;                           // 0000
    S2R R1, SR_CTAID_X &stall=1 &wsb=0 ;                         // 0010
    UMOV UR0, c[0x0][0x170] &stall=1 ;                           // 0020
    IMAD R0, R1, c[0x0][0x0], R0 &stall=5 &req=1 ;               // 0030
    ISETP.LT.AND P0, R0, c[0x0][0x174], PT &stall=4 ;            // 0040
    @!P0 EXIT &stall=1 ;                                         // 0050
    IMAD.WIDE R[2:3], R0, c[0x0][0x170], RZ &stall=1 ;           // 0060
    MOV R4, 0x0 &stall=1 ;                                       // 0070
    MOV R1, 0x0 &stall=1 ;                                       // 0080
    UISETP.GT.AND UP0, UR0, URZ, UPT &stall=2 ;                  // 0090
    LEA R6, P0, R2, c[0x0][0x160], 0x3 &stall=1 ;                // 00a0
    MOV R5, 0x0 &stall=3 ;                                       // 00b0
    LEA.HI.X R7, R2, c[0x0][0x164], R3, 0x3, P0 &stall=4 ;       // 00c0
    @!UP0 UBRA .L_2f0 &stall=1 ;                                 // 00d0
    UIADD UR1, UR0, -0x3 &stall=1 ;                              // 00e0
    UISETP.GE.AND UP0, UR0, -0x7ffffffd, UPT &stall=2 ;          // 00f0
    USEL UR0, UR1, -0x80000000, UP0 &stall=2 ;                   // 0100
    ISETP.LT.AND P0, R1, UR0, PT &stall=4 ;                      // 0110
    @!P0 BRA .L_280 &stall=1 ;                                   // 0120
.L_130:
    IMAD.WIDE R[2:3], R1, 0x8, R[6:7] &stall=5 ;                 // 0130
    LDG.64 R[8:9], [R[2:3]] &stall=1 &wsb=0 ;                    // 0140
    IADD R1, R1, 0x1 &stall=1 ;                                  // 0150
    LDG.64 R[10:11], [R[2:3]+0x8] &stall=3 &wsb=1 ;              // 0160
    IADD R1, R1, 0x1 &stall=1 ;                                  // 0170
    LDG.64 R[12:13], [R[2:3]+0x10] &stall=3 &wsb=2 ;             // 0180
    IADD R1, R1, 0x1 &stall=1 ;                                  // 0190
    LDG.64 R[2:3], [R[2:3]+0x18] &stall=3 &wsb=3 ;               // 01a0
    IADD R1, R1, 0x1 &stall=1 ;                                  // 01b0
    IADD R14, P0, R4, R8 &stall=4 &req=1 ;                       // 01c0
    IADD.X R15, R5, R9, P0 &stall=1 ;                            // 01d0
    IADD R4, P0, R14, R10 &stall=4 &req=2 ;                      // 01e0
    IADD.X R5, R15, R11, P0 &stall=1 ;                           // 01f0
    IADD R8, P0, R4, R12 &stall=4 &req=4 ;                       // 0200
    IADD.X R9, R5, R13, P0 &stall=1 ;                            // 0210
    IADD R4, P0, R8, R2 &stall=4 &req=8 ;                        // 0220
    IADD.X R5, R9, R3, P0 &stall=1 ;                             // 0230
    ISETP.LT.AND P0, R1, UR0, PT &stall=4 ;                      // 0240
    @P0 BRA .L_130 &stall=1 &yield=1 ;                           // 0250
    ISETP.LT.AND P0, R1, c[0x0][0x170], PT &stall=4 ;            // 0260
    @!P0 BRA .L_2f0 &stall=1 ;                                   // 0270
.L_280:
    IMAD.WIDE R[2:3], R1, 0x8, R[6:7] &stall=5 ;                 // 0280
    LDG.64 R[2:3], [R[2:3]] &stall=1 &wsb=0 ;                    // 0290
    IADD R4, P0, R4, R2 &stall=4 &req=1 ;                        // 02a0
    IADD.X R5, R5, R3, P0 &stall=1 ;                             // 02b0
    IADD R1, R1, 0x1 &stall=4 ;                                  // 02c0
    ISETP.LT.AND P0, R1, c[0x0][0x170], PT &stall=4 ;            // 02d0
    @P0 BRA .L_280 &stall=1 &yield=1 ;                           // 02e0
.L_2f0:
    MOV R1, 0x8 &stall=4 ;                                       // 02f0
    IMAD.WIDE R[0:1], R0, R1, c[0x0][0x168] &stall=5 ;           // 0300
    STG.64 [R[0:1]], R[4:5] &stall=1 ;                           // 0310
    EXIT &stall=1 ;                                              // 0320
