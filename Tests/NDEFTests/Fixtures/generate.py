#!/usr/bin/env python3
"""Generates the NDEF test fixtures with ndeflib (pip install ndeflib==0.3.3).

Run from this directory: `python3 generate.py`. The output files are committed so the
Swift tests do not need Python. Formats (tab-separated, hex strings lower-case, '' = empty):

messages.tsv  name, message hex, records "tnf,type,id,payload;..." (logical records, chunks reassembled)
typed.tsv     name, record index, kind, fields (text: text-hex, lang, utf8|utf16; uri: uri-hex;
              mime: type, payload-hex; external: domain, type; absolute: uri-hex; wellknown: type)
malformed.tsv name, hex, expected NDEFError case name (ndeflib also rejects every one of them
              unless marked '*' in the name: ndeflib does not reassemble chunks)
device.tsv    name, message hex, expected: device:<id>|other|error:<DeviceTagError case>
ntag213-device.bin  45-page NTAG213 memory dump: CC, Lock Control TLV, NDEF TLV (URI + device), Terminator
"""
import random
import ndef

OUT = {}


def enc(records):
    return b''.join(ndef.message_encoder(records))


def raw_fields(record_bytes_message):
    """Decode with ndeflib into (tnf, type, id, payload) using raw Record objects."""
    out = []
    for r in ndef.message_decoder(record_bytes_message, known_types={}):
        t = r.type
        if t == '':
            tnf, typ = 0, b''
        elif t.startswith('urn:nfc:wkt:'):
            tnf, typ = 1, t[12:].encode()
        elif t.startswith('urn:nfc:ext:'):
            tnf, typ = 4, t[12:].encode()
        elif t == 'unknown':
            tnf, typ = 5, b''
        elif t == 'unchanged':
            tnf, typ = 6, b''
        elif '/' in t and ':' not in t.split('/')[0]:
            tnf, typ = 2, t.encode()
        else:
            tnf, typ = 3, t.encode()
        out.append((tnf, typ, r.name.encode('latin-1'), bytes(r.data)))
    return out


def fmt_records(recs):
    return ';'.join('%d,%s,%s,%s' % (tnf, typ.hex(), id_.hex(), pl.hex()) for tnf, typ, id_, pl in recs)


messages, typed, malformed, device = [], [], [], []


def add(name, records, typed_rows=()):
    data = enc(records)
    messages.append((name, data.hex(), fmt_records(raw_fields(data))))
    for idx, kind, *fields in typed_rows:
        typed.append((name, str(idx), kind, *fields))


h = lambda s: s.encode('utf-8').hex()

# --- NFC Forum style vectors -------------------------------------------------------------
add('text-hello-en', [ndef.TextRecord('Hello, world!', 'en')],
    [(0, 'text', h('Hello, world!'), 'en', 'utf8')])
add('text-utf16-de', [ndef.TextRecord('Grüße 😀', 'de', 'UTF-16')],
    [(0, 'text', h('Grüße 😀'), 'de', 'utf16')])
add('text-en-US-empty', [ndef.TextRecord('', 'en-US')], [(0, 'text', '', 'en-US', 'utf8')])
add('uri-https-www', [ndef.UriRecord('https://www.nfc-forum.org')], [(0, 'uri', h('https://www.nfc-forum.org'))])
add('uri-tel', [ndef.UriRecord('tel:+4912345')], [(0, 'uri', h('tel:+4912345'))])
add('uri-urn-epc-id', [ndef.UriRecord('urn:epc:id:sgtin:0614141.107346.2017')],
    [(0, 'uri', h('urn:epc:id:sgtin:0614141.107346.2017'))])
add('uri-no-prefix', [ndef.UriRecord('geo:52.52,13.40')], [(0, 'uri', h('geo:52.52,13.40'))])
add('uri-urn-nfc', [ndef.UriRecord('urn:nfc:sn:handover')], [(0, 'uri', h('urn:nfc:sn:handover'))])
add('mime-device', [ndef.Record('application/vnd.roombridge.device+json', '',
                                b'{"v":1,"deviceId":"D-0001","model":"Pixel 7","serial":"SN123"}')],
    [(0, 'mime', 'application/vnd.roombridge.device+json',
      b'{"v":1,"deviceId":"D-0001","model":"Pixel 7","serial":"SN123"}'.hex())])
add('external', [ndef.Record('urn:nfc:ext:example.com:mytype', '', b'\x01\x02\x03')],
    [(0, 'external', 'example.com', 'mytype')])
add('absolute-uri', [ndef.Record('https://example.com/schema', 'id1', b'data')],
    [(0, 'absolute', h('https://example.com/schema'))])
add('unknown', [ndef.Record('unknown', '', b'\xde\xad\xbe\xef')])
add('empty', [ndef.Record()])
add('long-record', [ndef.Record('application/octet-stream', 'blob', bytes(range(256)) * 2)])
rec = ndef.TextRecord('with id', 'en'); rec.name = 'r1'
add('with-id', [rec], [(0, 'text', h('with id'), 'en', 'utf8')])
add('multi', [ndef.UriRecord('https://example.com/d/D-0001'), ndef.TextRecord('hi', 'en'),
              ndef.Record('application/json', '', b'{}')],
    [(0, 'uri', h('https://example.com/d/D-0001')), (1, 'text', h('hi'), 'en', 'utf8'),
     (2, 'mime', 'application/json', b'{}'.hex())])
add('smartposter', [ndef.SmartposterRecord('https://nfc-forum.org', 'NFC Forum')],
    [(0, 'wellknown', 'Sp')])

# --- Chunked records (built by hand; NDEF 1.0 §2.3.3) ---------------------------------------
def chunked(tnf, typ, id_, chunks, mb=True, me=True):
    out = b''
    for i, c in enumerate(chunks):
        first, last = i == 0, i == len(chunks) - 1
        hdr = (0x80 if mb and first else 0) | (0x40 if me and last else 0) | (0 if last else 0x20)
        hdr |= 0x10 if len(c) < 256 else 0
        hdr |= 0x08 if (first and id_) else 0
        hdr |= tnf if first else 6
        out += bytes([hdr, len(typ) if first else 0])
        out += bytes([len(c)]) if len(c) < 256 else len(c).to_bytes(4, 'big')
        if first and id_:
            out += bytes([len(id_)])
        if first:
            out += typ + id_
        out += c
    return out


ch = chunked(2, b'text/plain', b'', [b'Hello, ', b'chunked ', b'world!'])
messages.append(('chunked-3', ch.hex(), fmt_records([(2, b'text/plain', b'', b'Hello, chunked world!')])))
ch2 = chunked(1, b'T', b'c1', [b'\x02en', b'Chun', b'ked'])
messages.append(('chunked-text-id', ch2.hex(), fmt_records([(1, b'T', b'c1', b'\x02enChunked')])))
typed.append(('chunked-text-id', '0', 'text', h('Chunked'), 'en', 'utf8'))
big = bytes(random.Random(7).getrandbits(8) for _ in range(700))
ch3 = chunked(2, b'application/octet-stream', b'', [big[:300], big[300:301], big[301:]], me=False)
ch3 += bytes([0x51, 0x01, 0x08]) + b'T\x02enafter'  # short Text record with ME
messages.append(('chunked-long-then-text', ch3.hex(),
                 fmt_records([(2, b'application/octet-stream', b'', big), (1, b'T', b'', b'\x02enafter')])))

# --- Random messages (seeded) -----------------------------------------------------------------
rng = random.Random(2024)
for n in range(40):
    recs = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(['text', 'uri', 'mime', 'ext', 'abs', 'unknown', 'empty'])
        size = rng.choice([0, 1, 5, 100, 255, 256, 600])
        payload = bytes(rng.getrandbits(8) for _ in range(size))
        name = rng.choice(['', 'id', 'x' * 255])
        if kind == 'text':
            r = ndef.TextRecord(''.join(rng.choice('abcäöü€😀') for _ in range(size // 4)), rng.choice(['en', 'de-CH']),
                                rng.choice(['UTF-8', 'UTF-16']))
        elif kind == 'uri':
            r = ndef.UriRecord(rng.choice(['https://www.', 'mailto:', 'urn:epc:', 'ftp://', '']) + 'a' * (size // 3))
        elif kind == 'mime':
            r = ndef.Record('application/x-test', name, payload)
        elif kind == 'ext':
            r = ndef.Record('urn:nfc:ext:roombridge.example:t%d' % n, name, payload)
        elif kind == 'abs':
            r = ndef.Record('https://example.com/t/%d' % n, name, payload)
        elif kind == 'unknown':
            r = ndef.Record('unknown', name, payload)
        else:
            r = ndef.Record()
        if kind in ('text', 'uri') and name:
            r.name = name
        recs.append(r)
    add('random-%02d' % n, recs)

# --- Malformed messages --------------------------------------------------------------------
def bad(name, data, case):
    strict_ok = name.endswith('*')
    if not strict_ok:
        try:
            list(ndef.message_decoder(data, known_types={}))
        except ndef.DecodeError:
            pass
        else:
            raise SystemExit('ndeflib accepted malformed vector %s' % name)
    malformed.append((name.rstrip('*'), data.hex(), case))

bad('empty-input*', b'', 'emptyMessage')
bad('header-only', b'\xd1', 'truncated')
bad('short-payload-past-end', b'\xd1\x01\x05T\x02en', 'truncated')
bad('long-payload-ffffffff', b'\xc1\x01\xff\xff\xff\xffT\x02en', 'truncated')
bad('type-past-end', b'\xd1\x05\x00TT', 'truncated')
bad('id-past-end', b'\xd9\x01\x00\x05T', 'truncated')
bad('no-mb', b'\x51\x01\x00T', 'missingMessageBegin')
bad('no-me', b'\x91\x01\x00T', 'missingMessageEnd')
bad('mb-in-middle', b'\x91\x01\x00T\xd1\x01\x00T', 'unexpectedMessageBegin')
bad('trailing-bytes*', b'\xd1\x01\x00T\x00\x00', 'trailingBytes')
bad('tnf7', b'\xd7\x00\x00', 'reservedTNF')
bad('empty-with-payload', b'\xd0\x00\x01\x00', 'invalidRecord')
bad('empty-with-type', b'\xd0\x01\x00T', 'invalidRecord')
bad('unknown-with-type', b'\xd5\x01\x00T', 'invalidRecord')
bad('wellknown-without-type', b'\xd1\x00\x00', 'invalidRecord')
bad('unchanged-alone*', b'\xd6\x00\x00', 'invalidChunk')
bad('chunk-without-end*', b'\xb2\x01\x01ax', 'invalidChunk')
bad('chunk-input-ends*', b'\xb2\x01\x01ax\x36\x00\x01y', 'invalidChunk')
bad('chunk-continues-with-text*', b'\xb2\x01\x01ax\x51\x01\x00T', 'invalidChunk')
bad('chunk-middle-with-id*', b'\xb2\x01\x01ax\x5e\x00\x01\x01iy', 'invalidChunk')
bad('chunk-middle-with-me*', b'\xb2\x01\x01ax\x76\x00\x01y', 'invalidChunk')
bad('chunk-empty-tnf*', b'\xb0\x00\x00\x56\x00\x00', 'invalidChunk')

# --- Device tag messages -------------------------------------------------------------------
DEV = 'application/vnd.roombridge.device+json'


def dev(name, records, expected):
    device.append((name, enc(records).hex(), expected))

dev('device-only', [ndef.Record(DEV, '', b'{"v":1,"deviceId":"D-0001","model":"Pixel 7","serial":"SN123"}')], 'device:D-0001')
dev('uri-then-device', [ndef.UriRecord('https://example.com/d/D-0002'),
                        ndef.Record(DEV, '', b'{"v":1,"deviceId":"D-0002"}')], 'device:D-0002')
dev('device-then-text', [ndef.Record(DEV, '', b'{"deviceId":"D-0003","extra":[1,{"a":null}],"v":1}'),
                         ndef.TextRecord('ignored', 'en')], 'device:D-0003')
dev('tolerated-json', [ndef.Record('application/json', '', b'{"deviceId":"D-0004","other":true}')], 'device:D-0004')
dev('json-without-deviceid', [ndef.Record('application/json', '', b'{"id":"x"}')], 'other')
dev('json-numeric-deviceid', [ndef.Record('application/json', '', b'{"deviceId":42}')], 'other')
dev('text-only', [ndef.TextRecord('hello', 'en')], 'other')
dev('device-missing-id', [ndef.Record(DEV, '', b'{"v":1,"model":"x"}')], 'error:missingDeviceId')
dev('device-invalid-json', [ndef.Record(DEV, '', b'{"v":1,"deviceId":"D-1"')], 'error:invalidJSON')
dev('device-invalid-utf8', [ndef.Record(DEV, '', b'{"deviceId":"\xff"}')], 'error:invalidUTF8')
dev('device-too-large', [ndef.Record(DEV, '', b'{"deviceId":"D-1","pad":"' + b'x' * 500 + b'"}')], 'error:payloadTooLarge')
dev('device-array', [ndef.Record(DEV, '', b'[1,2]')], 'error:notAnObject')
dev('device-id-number', [ndef.Record(DEV, '', b'{"deviceId":7}')], 'error:invalidField')
dev('device-conflict', [ndef.Record(DEV, '', b'{"deviceId":"A"}'), ndef.Record(DEV, '', b'{"deviceId":"B"}')],
    'error:conflictingDeviceRecords')
dev('device-preferred-over-json', [ndef.Record('application/json', '', b'{"deviceId":"J"}'),
                                   ndef.Record(DEV, '', b'{"deviceId":"M"}')], 'device:M')

# --- NTAG213 memory dump ---------------------------------------------------------------------
msg = enc([ndef.UriRecord('https://example.com/d/D-0001'),
           ndef.Record(DEV, '', b'{"v":1,"deviceId":"D-0001","model":"Pixel 7","serial":"SN123"}')])
assert len(msg) < 0xFF
data_area = bytes([0x01, 0x03, 0xA0, 0x10, 0x44]) + bytes([0x03, len(msg)]) + msg + b'\xfe'
data_area = data_area.ljust(144, b'\x00')
header = bytes.fromhex('04a1b2 9f c3d4e5f6 00 48 0000') + bytes.fromhex('e1101200')
config = bytes(20)
image = header + data_area + config
assert len(image) == 45 * 4
open('ntag213-device.bin', 'wb').write(image)


def write(fname, rows):
    with open(fname, 'w') as f:
        for row in rows:
            f.write('\t'.join(row) + '\n')

write('messages.tsv', messages)
write('typed.tsv', typed)
write('malformed.tsv', malformed)
write('device.tsv', device)
print('messages %d, typed %d, malformed %d, device %d' % (len(messages), len(typed), len(malformed), len(device)))
