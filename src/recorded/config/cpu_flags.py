"""CPU flag names as Linux reports them in /proc/cpuinfo, so that a typo in a target's requirement
(``amx_bf61``) is refused, not silently never matched: x86 names from the kernel's ``cpufeatures.h``
(``flags``), Arm ones from its ``hwcap`` list (``Features``). Add a missing one in alphabetical order."""

from __future__ import annotations

import difflib

_X86 = """
3dnow 3dnowext 3dnowprefetch abm acc acpi adx aes amd_dcm amd_lbr_v2 amd_ppin amx_bf16 amx_complex amx_fp16
amx_int8 amx_tile aperfmperf apic arat arch_capabilities arch_lbr arch_perfmon art avic avx avx10 avx2
avx512_4fmaps avx512_4vnniw avx512_bf16 avx512_bitalg avx512_fp16 avx512_vbmi2 avx512_vnni avx512_vp2intersect
avx512_vpopcntdq avx512bw avx512cd avx512dq avx512er avx512f avx512ifma avx512pf avx512vbmi avx512vl avx_ifma
avx_ne_convert avx_vnni avx_vnni_int8 bmi1 bmi2 bpext bts bus_lock_detect cat_l2 cat_l3 cdp_l2 cdp_l3 cldemote
clflush clflushopt clwb clzero cmov cmp_legacy cmpccxadd constant_tsc cpb cpuid cpuid_fault cqm cqm_llc
cqm_mbm_local cqm_mbm_total cqm_occup_llc cr8_legacy cx16 cx8 dca de decodeassists ds_cpl dtes64 dtherm enqcmd
epb erms est extapic extd_apicid f16c flexpriority flush_l1d flushbyasid fma fma4 fpu fsgsbase fsrc fsrm fsrs
fxsr fxsr_opt gfni hle ht hw_pstate hwp hwp_act_window hwp_epp hwp_notify hwp_pkg_req hypervisor ibpb ibrs
ibrs_enhanced ibs ibt ida intel_ppin intel_pt invpcid invpcid_single irperf la57 lahf_lm lbrv lm mba mca mce
md_clear misalignsse mmx mmxext monitor movbe movdir64b movdiri mpx msr mtrr mwaitx nonstop_tsc nopl npt
nrip_save nx ospke osvw osxsave pae pat pausefilter pbe pcid pclmulqdq pconfig pdcm pdpe1gb perfctr_core
perfctr_llc perfctr_nb pfthreshold pge pku pln pni popcnt prefetchi pse pse36 pts rdpid rdpru rdrand rdseed
rdt_a rdtscp rep_good rtm sdbg sep serialize sev sev_es sgx sha_ni skinit smap smca sme smep smx
split_lock_detect ss ssbd sse sse2 sse4_1 sse4_2 sse4a ssse3 stibp succor svm svm_lock syscall tbm tce tm tm2
tme topoext tpr_shadow tsc tsc_adjust tsc_deadline_timer tsc_known_freq tsc_reliable tsc_scale tsxldtrk umip
user_shstk v_spec_ctrl v_vmsave_vmload vaes vgif vmcb_clean vme vmmcall vmx vnmi vpclmulqdq vpid waitpkg
wbnoinvd wdt x2apic x2avic xgetbv1 xop xsave xsavec xsaveerptr xsaveopt xsaves xtopology xtpr
"""

_ARM = """
aes afp asimd asimddp asimdfhm asimdhp asimdrdm atomics bf16 bti cpuid crc32 cssc dcpodp dcpop dgh dit ebf16
ecv evtstrm f8cvt f8dp2 f8dp4 f8e4m3 f8e5m2 f8fma faminmax fcma flagm flagm2 fp fphp fpmr frint hbc i8mm
ilrcpc jscvt lrcpc lrcpc3 lse128 lut mops mte mte3 paca pacg pmull rng rpres rprfm sb sha1 sha2 sha3 sha512
sm3 sm4 sme sme2 sme2p1 sme_b16b16 sme_b16f32 sme_bi32i32 sme_f16f16 sme_f16f32 sme_f32f32 sme_f64f64 sme_fa64
sme_i16i32 sme_i16i64 sme_i8i32 ssbs sve sve2 sve2p1 sve_b16b16 sve_ebf16 sveaes svebf16 svebitperm svef32mm
svef64mm svei8mm svepmull svesha3 svesm4 uscat wfxt
"""

#: Every flag name a requirement may use.
KNOWN = frozenset(_X86.split()) | frozenset(_ARM.split())


def unknown(names) -> list[str]:
    """The names in ``names`` that are not CPU flags, each with the nearest known one."""
    near = {n: difflib.get_close_matches(n, sorted(KNOWN), n=1, cutoff=0.7) for n in names if n not in KNOWN}
    return [f"{n!r}" + (f" (did you mean {m[0]!r}?)" if m else "") for n, m in near.items()]
