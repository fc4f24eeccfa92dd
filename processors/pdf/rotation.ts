/**
 * A page's `/Rotate` as viewers show it. pdf.js (`Page.rotate`) and qpdf do the same: a value that is
 * no multiple of 90 (`45`, from a broken producer) counts as 0; the others are taken modulo 360.
 */

/**
 * The displayed rotation of a page.
 * @param rotate the page's (inherited) `/Rotate`, degrees, any integer
 * @returns 0, 90, 180 or 270 (clockwise on display)
 */
export function viewedAngle(rotate: number): number {
  return rotate % 90 === 0 ? ((rotate % 360) + 360) % 360 : 0;
}
