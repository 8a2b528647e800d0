// Decodes the PNG screenshots headless Chromium takes (8-bit RGB or RGBA, not interlaced) into
// raw pixels with node's zlib, so the HTML check can look at what was really painted.
// PNG format: https://www.w3.org/TR/png/ (chunks, IHDR, IDAT, scanline filters).
import { inflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunks(png) {
  if (!png.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  const out = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    out.push({ type: png.toString('ascii', at + 4, at + 8), data: png.subarray(at + 8, at + 8 + length) });
    at += 12 + length;  // length, type, data, CRC
  }
  return out;
}

function paeth(a, b, c) {
  const p = a + b - c;
  const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// Undoes the per-scanline filters in place; returns the rows without their filter bytes.
function unfilter(raw, width, height, bpp) {
  const stride = width * bpp;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const left = x >= bpp ? pixels[y * stride + x - bpp] : 0;
      const up = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const upLeft = y > 0 && x >= bpp ? pixels[(y - 1) * stride + x - bpp] : 0;
      const predictor = [0, left, up, (left + up) >> 1, paeth(left, up, upLeft)][filter];
      if (predictor === undefined) throw new Error(`bad PNG filter ${filter}`);
      pixels[y * stride + x] = (line[x] + predictor) & 0xff;
    }
  }
  return pixels;
}

// {width, height, rgb(i) -> [r, g, b]} of a PNG buffer.
export function decodePng(png) {
  const all = chunks(png);
  const header = all.find((c) => c.type === 'IHDR').data;
  const width = header.readUInt32BE(0), height = header.readUInt32BE(4);
  const [depth, colorType, , , interlace] = header.subarray(8, 13);
  if (depth !== 8 || ![2, 6].includes(colorType) || interlace !== 0) {
    throw new Error(`unsupported PNG (depth ${depth}, colour type ${colorType}, interlace ${interlace})`);
  }
  const bpp = colorType === 6 ? 4 : 3;
  const raw = inflateSync(Buffer.concat(all.filter((c) => c.type === 'IDAT').map((c) => c.data)));
  const pixels = unfilter(raw, width, height, bpp);
  return { width, height, rgb: (i) => [pixels[i * bpp], pixels[i * bpp + 1], pixels[i * bpp + 2]] };
}

// How many distinct colours the image has, and how many pixels are within `tolerance` of `rgb`.
export function countColours(image, rgb, tolerance = 6) {
  const seen = new Set();
  let matching = 0;
  for (let i = 0; i < image.width * image.height; i++) {
    const [r, g, b] = image.rgb(i);
    seen.add((r << 16) | (g << 8) | b);
    if (rgb && Math.abs(r - rgb[0]) <= tolerance && Math.abs(g - rgb[1]) <= tolerance &&
        Math.abs(b - rgb[2]) <= tolerance) matching++;
  }
  return { distinct: seen.size, matching };
}
