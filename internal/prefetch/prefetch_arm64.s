#include "textflag.h"

// func lines(addr, n uintptr)
TEXT ·lines(SB), NOSPLIT|NOFRAME, $0-16
	MOVD addr+0(FP), R0
	MOVD n+8(FP), R1
	ADD  R0, R1, R1
	AND  $~63, R0, R0
loop:
	PRFM (R0), PLDL1KEEP
	ADD  $64, R0, R0
	CMP  R1, R0
	BLO  loop
	RET
