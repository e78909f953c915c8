// See pg_backend.hpp.
#include "a2ad/storage/postgres/pg_backend.hpp"

#include <libpq-fe.h>

#include <cstring>

namespace a2ad::storage {

std::string PostgresDatabaseName(const std::string& url) {
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), nullptr);
  if (!opts) return {};
  std::string name;
  for (PQconninfoOption* o = opts; o->keyword; ++o)
    if (std::strcmp(o->keyword, "dbname") == 0 && o->val) name = o->val;
  PQconninfoFree(opts);
  return name;
}

std::vector<std::pair<std::string, std::string>> PostgresEnvironment(const std::string& url) {
  std::vector<std::pair<std::string, std::string>> env;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), nullptr);
  if (!opts) return env;
  for (PQconninfoOption* o = opts; o->keyword; ++o)
    if (o->envvar && o->val && *o->val) env.emplace_back(o->envvar, o->val);
  PQconninfoFree(opts);
  return env;
}

core::Result<std::unique_ptr<PostgresBackend>> PostgresBackend::Open(const std::string& url,
                                                                     PostgresOptions opts,
                                                                     ClusterOptions cluster) {
  if (cluster.replica_id.empty()) cluster.replica_id = "a2ad";
  std::string holder = PgCluster::MakeHolder(cluster.replica_id);
  opts.lease_holder = holder;
  opts.replica_id = cluster.replica_id;
  auto store = PostgresStore::Open(url, std::move(opts));
  if (!store) return std::move(store).error();
  std::unique_ptr<PostgresBackend> b(new PostgresBackend());
  b->store_ = std::move(store).value();
  b->url_ = url;
  b->cluster_ = std::make_unique<PgCluster>(url, std::move(cluster), std::move(holder));
  const std::string name = PostgresDatabaseName(url);
  b->where_ = "PostgreSQL database " + (name.empty() ? std::string("(libpq's default)") : name);
  return b;
}

}  // namespace a2ad::storage
