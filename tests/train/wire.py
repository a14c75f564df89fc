"""A tiny protobuf wire encoder, independent of aotnn, for hand-encoding checkpoint bytes in tests."""


def varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def ld(field, payload):
    """A length-delimited field (wire type 2)."""
    return varint(field << 3 | 2) + varint(len(payload)) + payload
