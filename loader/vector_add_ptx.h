// vector_add(const float* a, const float* b, float* c, int n): c[i] = a[i] + b[i].
// Hand-written PTX for ISA 6.0 (CUDA 9.0) and target sm_30, the oldest GPU any driver of CUDA 9 or
// later runs: PTX is compiled only for its target or a newer GPU, and CUDA 11 and 12 applications
// still run on sm_35/37 (Kepler, R470) and sm_50 (Maxwell). Drivers compile it for newer GPUs
// even where offline SASS for old targets has been dropped (ptxas 13.0 builds it for sm_75 to
// sm_120).
#pragma once

namespace depscan {

inline constexpr const char* kVectorAddEntry = "vector_add";
inline constexpr const char* kVectorAddPtxTarget = ".version 6.0 .target sm_30";

inline constexpr const char kVectorAddPtx[] = R"PTX(
.version 6.0
.target sm_30
.address_size 64

.visible .entry vector_add(
	.param .u64 vector_add_param_0,
	.param .u64 vector_add_param_1,
	.param .u64 vector_add_param_2,
	.param .u32 vector_add_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<11>;

	ld.param.u64 	%rd1, [vector_add_param_0];
	ld.param.u64 	%rd2, [vector_add_param_1];
	ld.param.u64 	%rd3, [vector_add_param_2];
	ld.param.u32 	%r2, [vector_add_param_3];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	DONE;
	cvta.to.global.u64 	%rd4, %rd1;
	mul.wide.s32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd4, %rd5;
	cvta.to.global.u64 	%rd7, %rd2;
	add.s64 	%rd8, %rd7, %rd5;
	ld.global.f32 	%f1, [%rd6];
	ld.global.f32 	%f2, [%rd8];
	add.f32 	%f3, %f1, %f2;
	cvta.to.global.u64 	%rd9, %rd3;
	add.s64 	%rd10, %rd9, %rd5;
	st.global.f32 	[%rd10], %f3;
DONE:
	ret;
}
)PTX";

}  // namespace depscan
