// dtoa.cc - cs_dtoa_shortest (dtoa.h) from Dragonbox. C++ only because the
// library is; built without exceptions or RTTI, so the object needs
// nothing from libstdc++ and links into the C libraries as they are.
#include "dtoa.h"

#include <dragonbox/dragonbox.h>

void cs_dtoa_shortest(double v, unsigned long long *digits, int *exp10)
{
	auto r = jkj::dragonbox::to_decimal(v, jkj::dragonbox::policy::sign::ignore,
					    jkj::dragonbox::policy::trailing_zero::remove);
	*digits = r.significand;
	*exp10 = r.exponent;
}
