import { toolError } from '../lib/tool-context.js';

// distance: the great-circle distance between two points (haversine, mean Earth radius 6371 km).

interface Point {
  readonly lat: number;
  readonly lng: number;
}

interface Args {
  readonly from: Point;
  readonly to: Point;
}

const EARTH_RADIUS_KM = 6371.0088;
const KM_PER_MILE = 1.609344;

export default async function distance(args: Args): Promise<{ km: number; miles: number }> {
  const a = point(args.from, 'from');
  const b = point(args.to, 'to');
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  const km = 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
  return { km: Math.round(km * 10) / 10, miles: Math.round((km / KM_PER_MILE) * 10) / 10 };
}

function point(p: Point | undefined, name: string): Point {
  const ok = p && Number.isFinite(p.lat) && Number.isFinite(p.lng) && Math.abs(p.lat) <= 90 && Math.abs(p.lng) <= 180;
  if (!ok) throw toolError('BAD_COORDINATES', `${name} must be { lat, lng } with lat in [-90, 90] and lng in [-180, 180]`);
  return p;
}
