// CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected 0x82F63B78), the checksum of the resume
// record's blocks: with the CPU's CRC instructions it costs about a tenth of a copy of the data.
// On x86-64 long inputs run three independent crc32q chains at once (one chain waits 3 cycles
// per 8 bytes; three keep the CRC unit busy every cycle) and join them with PCLMULQDQ.
#include "CHaulSys.h"
#include <string.h>

static uint32_t table[8][256];
static int table_ready = 0;

static void make_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t crc = n;
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
        table[0][n] = crc;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t crc = table[0][n];
        for (int k = 1; k < 8; k++) {
            crc = table[0][crc & 0xff] ^ (crc >> 8);
            table[k][n] = crc;
        }
    }
    __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t crc32c_software(uint32_t crc, const unsigned char *p, size_t n) {
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) make_table();   // idempotent: same values
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        word ^= crc;
        crc = table[7][word & 0xff] ^ table[6][(word >> 8) & 0xff] ^ table[5][(word >> 16) & 0xff]
            ^ table[4][(word >> 24) & 0xff] ^ table[3][(word >> 32) & 0xff] ^ table[2][(word >> 40) & 0xff]
            ^ table[1][(word >> 48) & 0xff] ^ table[0][word >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((always_inline))
static inline uint64_t load64(const unsigned char *p) {
    uint64_t word;
    memcpy(&word, p, 8);   // any alignment
    return word;
}

// One chain of crc32q: each instruction waits for the previous one (3 cycles), so this runs at
// a third of what the CPU can issue. Used for short inputs, tails, and CPUs without PCLMULQDQ.
__attribute__((target("sse4.2")))
static uint32_t crc32c_hardware(uint32_t crc, const unsigned char *p, size_t n) {
    uint64_t c = crc;
    while (n >= 8) {
        c = __builtin_ia32_crc32di(c, load64(p));
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}

// Three chains at once. A round of 3 * `stream` bytes is split into streams A, B and C of
// `stream` bytes each (a multiple of 8, at least 16); A continues `crc`, B and C start from 0, and the three
// crc32q chains advance in the same loop, so the CPU overlaps them.
//
// Combining them. Without the inversions (haul_crc32c applies those), the state after a message
// M from state s is s(x) * x^(8|M|) + M(x) * x^32 mod P, linear in s and M; so
//   crc(s, A B C) = crc(s, A) * x^(16 * stream) + crc(0, B) * x^(8 * stream) + crc(0, C)  mod P.
// Both shifts are carry-less products with constants, reduced by a crc32q. In the bit-reflected
// order crc32q uses (bit 0 is the highest power), the 63-bit product of two 32-bit values a and k,
// read as 64 bits of data, is a * k * x, and crc32q(0, d) is d * x^32 mod P; so
// crc32q(0, clmul(a, k)) = a * k * x^33, and k = x^(8N - 33) mod P shifts a over N bytes.
// crc32q is linear in its data too, so both shifted states are XORed into the last word of C
// and reduced by the crc32q that C needs anyway: crc32q(c, w ^ d) = crc32q(c, w) ^ crc32q(0, d).
__attribute__((target("sse4.2,pclmul"), always_inline))
static inline uint32_t crc32c_round(uint32_t crc, const unsigned char *p, size_t stream,
                                    uint32_t shift_two_streams, uint32_t shift_one_stream) {
    const unsigned char *a = p, *b = p + stream, *c = p + 2 * stream;
    uint64_t crc_a = crc, crc_b = 0, crc_c = 0;
    for (size_t i = 0; i < stream - 8; i += 8) {
        crc_a = __builtin_ia32_crc32di(crc_a, load64(a + i));
        crc_b = __builtin_ia32_crc32di(crc_b, load64(b + i));
        crc_c = __builtin_ia32_crc32di(crc_c, load64(c + i));
    }
    crc_a = __builtin_ia32_crc32di(crc_a, load64(a + stream - 8));
    crc_b = __builtin_ia32_crc32di(crc_b, load64(b + stream - 8));
    // _mm_cvtsi32_si128 clears bits 32...127, so each product is the 63-bit product of two CRCs.
    __m128i shifted_a = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)crc_a),
                                             _mm_cvtsi32_si128((int)shift_two_streams), 0x00);
    __m128i shifted_b = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)crc_b),
                                             _mm_cvtsi32_si128((int)shift_one_stream), 0x00);
    uint64_t shifted = (uint64_t)_mm_cvtsi128_si64(_mm_xor_si128(shifted_a, shifted_b));
    return (uint32_t)__builtin_ia32_crc32di(crc_c, load64(c + stream - 8) ^ shifted);
}

// The stream lengths of the rounds, longest first, with x^(16 * stream - 33) and
// x^(8 * stream - 33) mod P, bit-reflected. They can be recomputed from x^0 = 0x80000000 by
// multiplying by x (8N - 33) times: v = (v >> 1) ^ (v & 1 ? 0x82F63B78 : 0).
static const struct {
    size_t stream;
    uint32_t shift_two_streams, shift_one_stream;
} rounds[] = {
    { 8192, 0x1DC403CCu, 0x54A86326u },   // x^131039, x^65503
    { 4096, 0x54A86326u, 0x82F89C77u },   // x^65503, x^32735
    { 2048, 0x82F89C77u, 0xA51B6135u },   // x^32735, x^16351
    { 1024, 0xA51B6135u, 0x170076FAu },   // x^16351, x^8159
    { 512, 0x170076FAu, 0xDD7E3B0Cu },    // x^8159, x^4063
    { 256, 0xDD7E3B0Cu, 0xB9E02B86u },    // x^4063, x^2015
    { 128, 0xB9E02B86u, 0x0D3B6092u },    // x^2015, x^991
    { 64, 0x0D3B6092u, 0x9E4ADDF8u },     // x^991, x^479
};

// Rounds of 3 * 8 KiB while they fit, then at most one round of each shorter length (what is
// left after the rounds of 3 * L is shorter than 3 * L, so it holds at most one round of
// 3 * L / 2), then the serial loop for the last < 192 bytes. A round costs about 15 cycles to
// combine on top of its stream / 8 cycles of crc32q, so halving stops at 64-byte streams.
__attribute__((target("sse4.2,pclmul")))
static uint32_t crc32c_hardware_three_way(uint32_t crc, const unsigned char *p, size_t n) {
    for (size_t r = 0; r < sizeof rounds / sizeof rounds[0]; r++) {
        size_t length = 3 * rounds[r].stream;
        while (n >= length) {
            crc = crc32c_round(crc, p, rounds[r].stream,
                               rounds[r].shift_two_streams, rounds[r].shift_one_stream);
            p += length;
            n -= length;
        }
    }
    return crc32c_hardware(crc, p, n);
}
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
static uint32_t crc32c_hardware(uint32_t crc, const unsigned char *p, size_t n) {
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = __crc32cd(crc, word);
        p += 8;
        n -= 8;
    }
    while (n--) crc = __crc32cb(crc, *p++);
    return crc;
}
#endif

uint32_t haul_crc32c(uint32_t crc, const void *data, size_t length) {
    const unsigned char *p = data;
    crc = ~crc;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2")) {
        if (__builtin_cpu_supports("pclmul")) return ~crc32c_hardware_three_way(crc, p, length);
        return ~crc32c_hardware(crc, p, length);
    }
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
    return ~crc32c_hardware(crc, p, length);
#endif
    return ~crc32c_software(crc, p, length);
}
