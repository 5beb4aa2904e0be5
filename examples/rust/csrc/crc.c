/* The C half of the example: a CRC-32 computed one byte at a time, and a walk over the decimal
 * digits of a number that calls back into Rust. */
#include <stddef.h>
#include <stdint.h>

/* One byte into the running CRC (reflected, polynomial 0xEDB88320). */
uint32_t crc_byte(uint32_t crc, uint8_t byte) {
    crc ^= byte;
    for (int bit = 0; bit < 8; bit++)
        crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    return crc;
}

/* CRC-32 of len bytes: crc_byte once per byte. */
uint32_t crc32(const uint8_t *data, size_t len) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++)
        crc = crc_byte(crc, data[i]);
    return ~crc;
}

/* Calls visit once per decimal digit of n, most significant first. */
void for_each_digit(unsigned n, void (*visit)(unsigned digit)) {
    if (n >= 10)
        for_each_digit(n / 10, visit);
    visit(n % 10);
}
