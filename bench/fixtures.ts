/** The fixed 7-rule policy and data shared by the HTTP benchmarks (driving-licence style). */

export const LICENCE_POLICY = `# Driving licence eligibility
A **applicant** gets a licence
  if the **applicant** meets the age requirement
  and the **applicant** passes the eyesight test
  and $theory is satisfied
  and the **applicant** has a clean record
  and the __country__ of the **address** of the **applicant** is in ["NL", "BE", "DE", "FR"].

A **applicant** meets the age requirement
  if the __date of birth__ of the **applicant** is older than 17 years.

A **applicant** passes the eyesight test
  if the __vision score__ of the **applicant** is at least 0.5
  or the __corrected vision__ of the **applicant** is at least 0.6.

theory: if applicant.exams.theory.score >= 43 and applicant.exams.theory.date is within 2 years -> theory passed.

A **applicant** has a clean record
  if all of the __offences__ of the **applicant** satisfies (its __points__ is less than 4)
  and the number of __offences__ of the **applicant** is no more than 2
  and the **applicant** is not banned.

A **applicant** is not banned
  if the __ban__ of the **applicant** is empty.
`;

const today = new Date();
const isoDaysAgo = (days: number) => new Date(today.getTime() - days * 86_400_000).toISOString().slice(0, 10);

export const LICENCE_DATA = {
  applicant: {
    dateOfBirth: '1990-04-12',
    visionScore: 0.7,
    correctedVision: 0.9,
    exams: { theory: { score: 47, date: isoDaysAgo(120) } },
    offences: [{ points: 1 }, { points: 2 }],
    address: { street: 'Keizersgracht 1', country: 'NL' },
  },
};
