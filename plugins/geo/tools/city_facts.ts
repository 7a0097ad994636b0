import { citiesNamed, closeNames, nameKey, type City } from '../lib/cities.js';
import { toolError } from '../lib/tool-context.js';

// city_facts: country, population, coordinates and zone of a city, by name (any case, with or
// without diacritics). Several cities share a name: `country` (a name or an ISO 3166 alpha-2
// code) narrows the choice; otherwise the most populous is reported.

interface Args {
  readonly city: string;
  readonly country?: string;
}

export interface CityFacts extends City {
  /** How many cities in the dataset have this name. */
  readonly same_name: number;
}

export default async function cityFacts(args: Args): Promise<CityFacts> {
  const name = typeof args.city === 'string' ? args.city : '';
  const all = citiesNamed(name);
  if (all.length === 0) {
    const close = closeNames(name);
    const hint = close.length ? `; did you mean ${close.map((c) => `"${c}"`).join(', ')}?` : '';
    throw toolError('CITY_NOT_FOUND', `no city named "${name}" is known${hint}`);
  }
  const country = args.country?.trim();
  const cities = country ? all.filter((c) => c.iso2.toLowerCase() === country.toLowerCase() || nameKey(c.country) === nameKey(country)) : all;
  const city = cities[0];
  if (!city) {
    const where = [...new Set(all.map((c) => c.country))].join(', ');
    throw toolError('CITY_NOT_FOUND', `no city named "${name}" is known in "${country}"; it is known in: ${where}`);
  }
  return {
    city: city.city,
    country: city.country,
    iso2: city.iso2,
    province: city.province,
    population: city.population,
    lat: city.lat,
    lng: city.lng,
    timezone: city.timezone,
    same_name: all.length,
  };
}
